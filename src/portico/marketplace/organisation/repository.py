"""Queries of organisations, their teams and memberships (relationships)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, ClassVar

from sqlalchemy import Select, delete, func, select

from portico.core.account import User
from portico.core.db.repository import Repository
from portico.core.pagination import ListQuery, Page, paginate
from portico.marketplace.organisation.models import (
    MemberRole,
    MembershipStatus,
    Organisation,
    OrganisationMembership,
    OrganisationRole,
    Team,
    TeamMembership,
    TeamRole,
)


@dataclass(frozen=True)
class MemberFilters:
    status: MembershipStatus | None = None
    #: case-insensitive substring of the account's email
    email: str | None = None
    team_id: uuid.UUID | None = None


def _contains(column: Any, fragment: str) -> Any:
    # autoescape: '%' and '_' typed by the administrator match themselves
    return func.lower(column).contains(fragment.lower(), autoescape=True)


class OrganisationRepository(Repository[Organisation]):
    model = Organisation
    sort_columns: ClassVar[dict[str, Any]] = {
        "name": Organisation.name,
        "created_at": Organisation.created_at,
    }

    def matching(self, name: str | None) -> Select[Any]:
        statement = select(Organisation)
        if name is not None:
            statement = statement.where(_contains(Organisation.name, name))
        return statement

    async def counts(
        self, organisation_ids: Collection[uuid.UUID]
    ) -> dict[uuid.UUID, dict[str, int]]:
        """Per organisation: active members, pending approvals and teams (three grouped
        queries for a whole page)."""
        out: dict[uuid.UUID, dict[str, int]] = {
            i: {"members": 0, "pending_approvals": 0, "teams": 0} for i in organisation_ids
        }
        if not organisation_ids:
            return out
        ids = list(organisation_ids)
        by_status = await self.session.execute(
            select(
                OrganisationMembership.organisation_id, OrganisationMembership.status, func.count()
            )
            .where(
                OrganisationMembership.organisation_id.in_(ids),
                OrganisationMembership.status.in_(
                    [MembershipStatus.ACTIVE, MembershipStatus.PENDING]
                ),
            )
            .group_by(OrganisationMembership.organisation_id, OrganisationMembership.status)
        )
        for organisation_id, status, count in by_status:
            key = "members" if status is MembershipStatus.ACTIVE else "pending_approvals"
            out[organisation_id][key] = count
        teams = await self.session.execute(
            select(Team.organisation_id, func.count())
            .where(Team.organisation_id.in_(ids))
            .group_by(Team.organisation_id)
        )
        for organisation_id, count in teams:
            out[organisation_id]["teams"] = count
        return out


class TeamRepository(Repository[Team]):
    model = Team
    sort_columns: ClassVar[dict[str, Any]] = {"name": Team.name, "created_at": Team.created_at}

    def of_organisation(self, organisation_id: uuid.UUID, name: str | None) -> Select[Any]:
        statement = select(Team).where(Team.organisation_id == organisation_id)
        if name is not None:
            statement = statement.where(_contains(Team.name, name))
        return statement

    async def in_organisation(self, organisation_id: uuid.UUID, team_id: uuid.UUID) -> Team | None:
        """The team, if it is one of the organisation's (another's is not found)."""
        return await self.first(
            select(Team).where(Team.id == team_id, Team.organisation_id == organisation_id)
        )

    async def many_in_organisation(
        self, organisation_id: uuid.UUID, team_ids: Collection[uuid.UUID]
    ) -> list[Team]:
        if not team_ids:
            return []
        return await self.all(
            select(Team).where(Team.organisation_id == organisation_id, Team.id.in_(team_ids))
        )

    async def member_counts(self, team_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, int]:
        if not team_ids:
            return {}
        rows = await self.session.execute(
            select(TeamMembership.team_id, func.count())
            .where(TeamMembership.team_id.in_(list(team_ids)))
            .group_by(TeamMembership.team_id)
        )
        return {team_id: count for team_id, count in rows}


class MembershipRepository(Repository[OrganisationMembership]):
    model = OrganisationMembership
    sort_columns: ClassVar[dict[str, Any]] = {
        "email": User.email,
        "status": OrganisationMembership.status,
        "created_at": OrganisationMembership.created_at,
        "status_changed_at": OrganisationMembership.status_changed_at,
    }

    def of_organisation(self, organisation_id: uuid.UUID, filters: MemberFilters) -> Select[Any]:
        """The organisation's memberships joined to their accounts (sorting by email needs
        them), narrowed by ``filters``."""
        statement = (
            select(OrganisationMembership)
            .join(User, User.id == OrganisationMembership.user_id)
            .where(OrganisationMembership.organisation_id == organisation_id)
        )
        if filters.status is not None:
            statement = statement.where(OrganisationMembership.status == filters.status)
        if filters.email is not None:
            statement = statement.where(_contains(User.email, filters.email))
        if filters.team_id is not None:
            statement = statement.where(
                OrganisationMembership.id.in_(
                    select(TeamMembership.membership_id).where(
                        TeamMembership.team_id == filters.team_id
                    )
                )
            )
        return statement

    async def page(self, statement: Select[Any], query: ListQuery) -> Page[OrganisationMembership]:
        return await paginate(
            self.session,
            statement,
            query,
            self.sort_columns,
            tiebreaker=OrganisationMembership.id.asc(),
        )

    async def in_organisation(
        self, organisation_id: uuid.UUID, membership_id: uuid.UUID, *, lock: bool = False
    ) -> OrganisationMembership | None:
        """The membership, if it is one of the organisation's; locked on PostgreSQL when
        asked, so that two decisions on it (approve and reject) are serialised (SQLite's
        write transaction already is)."""
        statement = select(OrganisationMembership).where(
            OrganisationMembership.id == membership_id,
            OrganisationMembership.organisation_id == organisation_id,
        )
        if lock:
            statement = statement.with_for_update()
        return await self.first(statement)

    async def of_user(
        self, organisation_id: uuid.UUID, user_id: uuid.UUID
    ) -> OrganisationMembership | None:
        return await self.first(
            select(OrganisationMembership)
            .where(
                OrganisationMembership.organisation_id == organisation_id,
                OrganisationMembership.user_id == user_id,
            )
            .with_for_update()
        )

    async def others_of_user(
        self, user_id: uuid.UUID, besides: uuid.UUID
    ) -> list[OrganisationMembership]:
        """The account's other memberships, in any organisation."""
        return await self.all(
            select(OrganisationMembership).where(
                OrganisationMembership.user_id == user_id, OrganisationMembership.id != besides
            )
        )

    async def accounts(self, user_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, User]:
        if not user_ids:
            return {}
        users = await self.session.scalars(select(User).where(User.id.in_(list(user_ids))))
        return {user.id: user for user in users}

    async def teams_of(self, membership_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, list[Team]]:
        """Each membership's teams, by name."""
        out: dict[uuid.UUID, list[Team]] = defaultdict(list)
        if membership_ids:
            rows = await self.session.execute(
                select(TeamMembership.membership_id, Team)
                .join(Team, Team.id == TeamMembership.team_id)
                .where(TeamMembership.membership_id.in_(list(membership_ids)))
                .order_by(Team.name, Team.id)
            )
            for membership_id, team in rows:
                out[membership_id].append(team)
        return out

    async def team_ids_in(self, membership_id: uuid.UUID) -> set[uuid.UUID]:
        rows = await self.session.scalars(
            select(TeamMembership.team_id).where(TeamMembership.membership_id == membership_id)
        )
        return set(rows)

    async def active_teams_of_user(self, user_id: uuid.UUID) -> dict[uuid.UUID, set[uuid.UUID]]:
        """The organisations the account is an active member of, each with the teams it is
        in there (empty: the organisation as a whole only). One query."""
        rows = await self.session.execute(
            select(OrganisationMembership.organisation_id, TeamMembership.team_id)
            .outerjoin(TeamMembership, TeamMembership.membership_id == OrganisationMembership.id)
            .where(
                OrganisationMembership.user_id == user_id,
                OrganisationMembership.status == MembershipStatus.ACTIVE,
            )
        )
        out: dict[uuid.UUID, set[uuid.UUID]] = {}
        for organisation_id, team_id in rows:
            teams = out.setdefault(organisation_id, set())
            if team_id is not None:
                teams.add(team_id)
        return out


class RoleRepository(Repository[OrganisationRole]):
    model = OrganisationRole

    async def custom_roles(self, organisation_id: uuid.UUID) -> list[OrganisationRole]:
        return await self.all(
            select(OrganisationRole)
            .where(OrganisationRole.organisation_id == organisation_id)
            .order_by(OrganisationRole.label, OrganisationRole.id)
        )

    async def in_organisation(
        self, organisation_id: uuid.UUID, role_id: uuid.UUID
    ) -> OrganisationRole | None:
        """The custom role, if it is one of the organisation's (another's is not found)."""
        return await self.first(
            select(OrganisationRole).where(
                OrganisationRole.id == role_id, OrganisationRole.organisation_id == organisation_id
            )
        )

    async def label_taken(
        self, organisation_id: uuid.UUID, label: str, *, besides: uuid.UUID | None = None
    ) -> bool:
        statement = select(OrganisationRole).where(
            OrganisationRole.organisation_id == organisation_id, OrganisationRole.label == label
        )
        if besides is not None:
            statement = statement.where(OrganisationRole.id != besides)
        return await self.first(statement) is not None

    async def direct_roles(self, membership_id: uuid.UUID) -> list[str]:
        return list(
            await self.session.scalars(
                select(MemberRole.role).where(MemberRole.membership_id == membership_id)
            )
        )

    async def team_roles(self, membership_id: uuid.UUID) -> list[tuple[Team, str]]:
        """The roles of the member's teams: (team, role) pairs, by team name."""
        rows = await self.session.execute(
            select(Team, TeamRole.role)
            .join(TeamMembership, TeamMembership.team_id == Team.id)
            .join(TeamRole, TeamRole.team_id == Team.id)
            .where(TeamMembership.membership_id == membership_id)
            .order_by(Team.name, Team.id, TeamRole.role)
        )
        return [(team, role) for team, role in rows]

    async def assign(self, membership_id: uuid.UUID, role: str) -> bool:
        """Give the member the role; False when it had it already."""
        found = await self.session.get(MemberRole, (membership_id, role))
        if found is not None:
            return False
        self.session.add(MemberRole(membership_id=membership_id, role=role))
        await self.session.flush()
        return True

    async def unassign(self, membership_id: uuid.UUID, role: str) -> bool:
        """Take the role from the member; False when it did not have it."""
        found = await self.session.get(MemberRole, (membership_id, role))
        if found is None:
            return False
        await self.session.delete(found)
        await self.session.flush()
        return True

    async def forget(self, role: str) -> None:
        """Delete every assignment of a custom role that is being deleted (members' and
        teams'): its id is text there, not a foreign key."""
        await self.session.execute(delete(MemberRole).where(MemberRole.role == role))
        await self.session.execute(delete(TeamRole).where(TeamRole.role == role))
