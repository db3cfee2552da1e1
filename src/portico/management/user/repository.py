from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, delete, func, select

from portico.core.account import AccountStatus, User
from portico.core.db.repository import Repository
from portico.management.group.models import Group
from portico.management.org.models import Membership
from portico.management.role.models import Role
from portico.management.role.permissions import ADMINISTRATOR_ROLE
from portico.management.user.models import Invitation


@dataclass(frozen=True)
class Member:
    """What the users endpoints show of a membership (read by ``UserRead``)."""

    id: uuid.UUID  # the account's
    email: str
    display_name: str
    status: AccountStatus
    role_ids: list[uuid.UUID]
    roles: list[Role]
    group_ids: list[uuid.UUID]
    invited_at: datetime | None
    created_at: datetime  # the membership's: when the user joined the organisation


class MemberRepository(Repository[Membership]):
    """Memberships of an organisation, with what the users endpoints show of them."""

    model = Membership
    sort_columns = {"email": User.email, "createdAt": Membership.created_at}

    def in_org(self, org_id: uuid.UUID) -> Select[Membership]:
        return (
            select(Membership)
            .join(User, User.id == Membership.user_id)
            .where(Membership.org_id == org_id)
        )

    async def get_in_org(self, org_id: uuid.UUID, user_id: uuid.UUID) -> Membership | None:
        return await self.first(self.in_org(org_id).where(Membership.user_id == user_id))

    async def members(self, org_id: uuid.UUID, memberships: Sequence[Membership]) -> list[Member]:
        """Memberships with their account, roles, groups and latest invitation: three queries
        for a whole page."""
        group_ids = await self.group_ids_of([m.id for m in memberships])
        invited_at = await self.invited_at(org_id, [m.user_id for m in memberships])
        members: list[Member] = []
        for membership in memberships:
            roles = sorted(membership.roles, key=lambda r: (r.name, str(r.id)))
            members.append(
                Member(
                    id=membership.user.id,
                    email=membership.user.email,
                    display_name=membership.user.display_name,
                    # until accepted, the membership is an invitation whatever the account is
                    status=AccountStatus.INVITED
                    if membership.accepted_at is None
                    else membership.user.status,
                    role_ids=[r.id for r in roles],
                    roles=roles,
                    group_ids=group_ids.get(membership.id, []),
                    invited_at=invited_at.get(membership.user_id),
                    created_at=membership.created_at,
                )
            )
        return members

    async def roles_in_org(self, org_id: uuid.UUID, ids: Collection[uuid.UUID]) -> list[Role]:
        if not ids:
            return []
        return list(
            await self.session.scalars(
                select(Role).where(Role.org_id == org_id, Role.id.in_(ids)).order_by(Role.name)
            )
        )

    async def groups_in_org(self, org_id: uuid.UUID, ids: Collection[uuid.UUID]) -> list[Group]:
        if not ids:
            return []
        return list(
            await self.session.scalars(
                select(Group).where(Group.org_id == org_id, Group.id.in_(ids))
            )
        )

    async def groups_of(self, membership_id: uuid.UUID) -> list[Group]:
        return list(
            await self.session.scalars(
                select(Group).join(Group.members).where(Membership.id == membership_id)
            )
        )

    async def group_ids_of(
        self, membership_ids: Collection[uuid.UUID]
    ) -> dict[uuid.UUID, list[uuid.UUID]]:
        """membership id → ids of its groups, ordered by group name."""
        out: dict[uuid.UUID, list[uuid.UUID]] = defaultdict(list)
        if membership_ids:
            rows = await self.session.execute(
                select(Membership.id, Group.id)
                .select_from(Group)
                .join(Group.members)
                .where(Membership.id.in_(membership_ids))
                .order_by(Group.name, Group.id)
            )
            for membership_id, group_id in rows:
                out[membership_id].append(group_id)
        return out

    async def invited_at(
        self, org_id: uuid.UUID, user_ids: Collection[uuid.UUID]
    ) -> dict[uuid.UUID, datetime]:
        """user id → when their latest invitation to the org was issued."""
        if not user_ids:
            return {}
        rows = await self.session.execute(
            select(Invitation.user_id, func.max(Invitation.created_at))
            .where(Invitation.org_id == org_id, Invitation.user_id.in_(user_ids))
            .group_by(Invitation.user_id)
        )
        return {user_id: at for user_id, at in rows}

    async def delete_pending_invitations(self, org_id: uuid.UUID, user_id: uuid.UUID) -> None:
        await self.session.execute(
            delete(Invitation).where(
                Invitation.org_id == org_id,
                Invitation.user_id == user_id,
                Invitation.accepted_at.is_(None),
            )
        )

    async def lock_administrator_role(self, org_id: uuid.UUID) -> Role | None:
        """The org's predefined Administrator role, locked (PostgreSQL) so that two requests
        demoting the last two Administrators at once are serialised and the second sees
        the first's change. SQLite serialises writers already (BEGIN IMMEDIATE)."""
        result: Role | None = await self.session.scalar(
            select(Role)
            .where(
                Role.org_id == org_id, Role.name == ADMINISTRATOR_ROLE, Role.predefined.is_(True)
            )
            .with_for_update()
        )
        return result

    async def count_active_holders(
        self, org_id: uuid.UUID, role_id: uuid.UUID, *, except_membership: uuid.UUID
    ) -> int:
        """Members other than ``except_membership`` granted ``role_id`` directly whose account
        can sign in (an invitee who never accepts administers nothing)."""
        count = await self.session.scalar(
            select(func.count())
            .select_from(Membership)
            .join(Membership.roles)
            .join(User, User.id == Membership.user_id)
            .where(
                Membership.org_id == org_id,
                Role.id == role_id,
                Membership.id != except_membership,
                Membership.accepted_at.is_not(None),
                User.status == AccountStatus.ACTIVE,
            )
        )
        return int(count or 0)
