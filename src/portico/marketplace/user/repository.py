"""Queries of the marketplace's users endpoints: accounts, their site roles and their
identity-provider link."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import ColumnElement, Select, false, func, literal, or_, select, true

from portico.core.account import AccountStatus, User
from portico.core.db.repository import Repository
from portico.core.db.types import UTCDateTime
from portico.marketplace.permissions import (
    ADMINISTRATOR,
    ANONYMOUS,
    AUTHENTICATED,
    SiteRole,
    effective_roles,
)
from portico.marketplace.user.models import ExternalIdentity, SiteRoleAssignment

# "Never signed in" sorts as the earliest sign-in on both stores (PostgreSQL would put NULL
# last in ascending order, SQLite first): oldest activity first, never-seen accounts included.
_NEVER = literal(datetime(1970, 1, 1, tzinfo=UTC), UTCDateTime())


@dataclass(frozen=True)
class Account:
    """What the users endpoints show of an account (read by ``UserRead``)."""

    id: uuid.UUID
    email: str
    display_name: str
    status: AccountStatus
    status_reason: str | None
    roles: list[SiteRole]
    identity: ExternalIdentity | None
    created_at: datetime
    last_login_at: datetime | None
    status_changed_at: datetime | None


class UserRepository(Repository[User]):
    model = User
    sort_columns: ClassVar[dict[str, Any]] = {
        "email": User.email,
        "created_at": User.created_at,
        "last_login_at": func.coalesce(User.last_login_at, _NEVER),
        "status": User.status,
    }

    def accounts(self) -> Select[Any]:
        return select(User)

    @staticmethod
    def with_status(statement: Select[Any], status: AccountStatus) -> Select[Any]:
        return statement.where(User.status == status)

    @staticmethod
    def email_contains(statement: Select[Any], fragment: str) -> Select[Any]:
        # autoescape: '%' and '_' typed by the administrator match themselves
        return statement.where(func.lower(User.email).contains(fragment, autoescape=True))

    @staticmethod
    def with_role(statement: Select[Any], role_id: str) -> Select[Any]:
        """Accounts whose effective roles include ``role_id`` (see ``effective_roles``)."""
        assigned = User.id.in_(
            select(SiteRoleAssignment.user_id).where(SiteRoleAssignment.role == role_id)
        )
        condition: ColumnElement[bool]
        if role_id == AUTHENTICATED:
            condition = true()
        elif role_id == ANONYMOUS:
            condition = false()
        elif role_id == ADMINISTRATOR:
            condition = or_(User.is_platform_admin.is_(True), assigned)
        else:
            condition = assigned
        return statement.where(condition)

    async def get_for_update(self, user_id: uuid.UUID) -> User | None:
        """The account, locked on PostgreSQL so that two concurrent transitions (approve and
        reject) are serialised and the second sees the first's status. SQLite serialises
        writers already (BEGIN IMMEDIATE)."""
        return await self.first(select(User).where(User.id == user_id).with_for_update())

    async def with_roles(self, user_id: uuid.UUID) -> tuple[User, list[str]] | None:
        """The account and its assigned site roles in one statement (every authenticated
        request asks for both: one round trip to the store fewer than two queries)."""
        rows = (
            await self.session.execute(
                select(User, SiteRoleAssignment.role)
                .outerjoin(SiteRoleAssignment, SiteRoleAssignment.user_id == User.id)
                .where(User.id == user_id)
            )
        ).all()
        if not rows:
            return None
        return rows[0][0], [role for _, role in rows if role is not None]

    async def roles_of(self, user_id: uuid.UUID) -> list[str]:
        """The site roles assigned to the account."""
        return list(
            await self.session.scalars(
                select(SiteRoleAssignment.role).where(SiteRoleAssignment.user_id == user_id)
            )
        )

    async def assigned_roles(self, user_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, list[str]]:
        out: dict[uuid.UUID, list[str]] = defaultdict(list)
        if user_ids:
            rows = await self.session.execute(
                select(SiteRoleAssignment.user_id, SiteRoleAssignment.role).where(
                    SiteRoleAssignment.user_id.in_(user_ids)
                )
            )
            for user_id, role in rows:
                out[user_id].append(role)
        return out

    async def identities(
        self, user_ids: Collection[uuid.UUID]
    ) -> dict[uuid.UUID, ExternalIdentity]:
        if not user_ids:
            return {}
        rows = await self.session.scalars(
            select(ExternalIdentity).where(ExternalIdentity.user_id.in_(user_ids))
        )
        return {row.user_id: row for row in rows}

    async def views(self, users: Collection[User]) -> list[Account]:
        """The accounts with their effective site roles and identity links: two queries for
        a whole page."""
        ids = [u.id for u in users]
        assigned = await self.assigned_roles(ids)
        identities = await self.identities(ids)
        return [
            Account(
                id=user.id,
                email=user.email,
                display_name=user.display_name,
                status=user.status,
                status_reason=user.status_reason,
                roles=effective_roles(
                    assigned.get(user.id, []), is_platform_admin=user.is_platform_admin
                ),
                identity=identities.get(user.id),
                created_at=user.created_at,
                last_login_at=user.last_login_at,
                status_changed_at=user.status_changed_at,
            )
            for user in users
        ]

    async def identity_of(self, user_id: uuid.UUID) -> ExternalIdentity | None:
        return await self.session.scalar(
            select(ExternalIdentity).where(ExternalIdentity.user_id == user_id)
        )
