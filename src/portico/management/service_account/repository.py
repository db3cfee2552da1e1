from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import lazyload

from portico.core.db.repository import OrgScopedRepository
from portico.management.role.models import Role
from portico.management.service_account.models import ServiceAccount, service_account_roles


class ServiceAccountRepository(OrgScopedRepository[ServiceAccount]):
    model = ServiceAccount
    sort_columns = {"name": ServiceAccount.name, "createdAt": ServiceAccount.created_at}
    filter_columns = {"name": ServiceAccount.name}

    async def by_token_hash(self, token_hash: str) -> ServiceAccount | None:
        """(Its roles are not loaded: authenticating needs none of them.)"""
        return await self.first(
            select(ServiceAccount)
            .where(ServiceAccount.token_hash == token_hash)
            .options(lazyload(ServiceAccount.roles))
        )

    async def mark_used(self, account_id: uuid.UUID, at: datetime) -> None:
        """``last_used_at`` set without touching ``updated_at`` (a use is not a change)."""
        await self.session.execute(
            update(ServiceAccount)
            .where(ServiceAccount.id == account_id)
            .values(last_used_at=at, updated_at=ServiceAccount.updated_at)
        )

    async def exists(self, account_id: uuid.UUID) -> bool:
        found = await self.session.scalar(
            select(ServiceAccount.id).where(ServiceAccount.id == account_id)
        )
        return found is not None

    async def permissions(self, account_id: uuid.UUID) -> frozenset[str]:
        """The union of the permissions of the account's roles."""
        granted: set[str] = set()
        for permissions in await self.session.scalars(
            select(Role.permissions)
            .join(service_account_roles, service_account_roles.c.role_id == Role.id)
            .where(service_account_roles.c.service_account_id == account_id)
        ):
            granted.update(permissions or [])
        return frozenset(granted)
