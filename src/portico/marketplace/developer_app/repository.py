"""Developer apps and their remotes: every query of the package."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Select, select

from portico.core.db.locks import share_keys
from portico.core.db.repository import Repository
from portico.marketplace.connection.models import GatewayConnection
from portico.marketplace.developer_app.models import AppRemote, DeveloperApp, RemoteWork


class DeveloperAppRepository(Repository[DeveloperApp]):
    model = DeveloperApp
    sort_columns = {
        "name": DeveloperApp.name,
        "created_at": DeveloperApp.created_at,
        "updated_at": DeveloperApp.updated_at,
    }

    def of_owner(self, owner_id: uuid.UUID) -> Select[DeveloperApp]:
        return select(DeveloperApp).where(DeveloperApp.owner_id == owner_id)

    async def owned(self, owner_id: uuid.UUID, app_id: uuid.UUID) -> DeveloperApp | None:
        return await self.first(
            select(DeveloperApp).where(DeveloperApp.id == app_id, DeveloperApp.owner_id == owner_id)
        )

    async def owned_for_update(self, owner_id: uuid.UUID, app_id: uuid.UUID) -> DeveloperApp | None:
        """The app, locked until the transaction ends and re-read (a concurrent rotation or
        deletion is seen)."""
        return await self.first(
            select(DeveloperApp)
            .where(DeveloperApp.id == app_id, DeveloperApp.owner_id == owner_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )

    async def name_taken(
        self, owner_id: uuid.UUID, name: str, *, besides: uuid.UUID | None = None
    ) -> bool:
        statement = select(DeveloperApp).where(
            DeveloperApp.owner_id == owner_id, DeveloperApp.name == name
        )
        if besides is not None:
            statement = statement.where(DeveloperApp.id != besides)
        return await self.first(statement) is not None


class AppRemoteRepository(Repository[AppRemote]):
    model = AppRemote

    async def of_app(
        self, app_id: uuid.UUID, connection_id: uuid.UUID | None = None
    ) -> list[AppRemote]:
        statement = select(AppRemote).where(AppRemote.app_id == app_id)
        if connection_id is not None:
            statement = statement.where(AppRemote.connection_id == connection_id)
        return await self.all(statement.order_by(AppRemote.created_at, AppRemote.id))

    async def find(
        self, app_id: uuid.UUID, connection_id: uuid.UUID, environment_id: str
    ) -> AppRemote | None:
        return await self.first(
            select(AppRemote).where(
                AppRemote.app_id == app_id,
                AppRemote.connection_id == connection_id,
                AppRemote.environment_id == environment_id,
            )
        )

    async def for_update(self, remote_id: uuid.UUID) -> AppRemote | None:
        """The remote app, locked and re-read, once its gateway connection and app are held
        ``FOR KEY SHARE`` (parents first, as their deletions take them: ``core/db/locks.py``)."""
        parents = (
            await self.session.execute(
                select(AppRemote.connection_id, AppRemote.app_id).where(AppRemote.id == remote_id)
            )
        ).first()
        if parents is None:
            return None
        await share_keys(self.session, GatewayConnection, parents.connection_id)
        await share_keys(self.session, DeveloperApp, parents.app_id)
        return await self.first(
            select(AppRemote)
            .where(AppRemote.id == remote_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )

    async def due(self, now: datetime, *, limit: int) -> Sequence[AppRemote]:
        """Remotes with work owed whose time has come, oldest first, locked (PostgreSQL:
        replicas sweeping at once take different rows)."""
        return await self.all(
            select(AppRemote)
            .where(AppRemote.work != RemoteWork.NONE, AppRemote.due_at <= now)
            .order_by(AppRemote.due_at, AppRemote.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
