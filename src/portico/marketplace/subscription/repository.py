"""Subscriptions: every query of the package."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, case, select

from portico.core.db.locks import share_keys
from portico.core.db.repository import Repository
from portico.core.pagination import ListQuery, Page
from portico.marketplace.connection.models import GatewayConnection
from portico.marketplace.developer_app.models import DeveloperApp
from portico.marketplace.node.models import CatalogueNode
from portico.marketplace.subscription.models import (
    RemoteAction,
    Subscription,
    SubscriptionStatus,
)

#: pending first, then what is under way, then the rest
_PENDING_FIRST = case(
    (Subscription.status == SubscriptionStatus.PENDING, 0),
    (Subscription.status == SubscriptionStatus.PROVISIONING, 1),
    else_=2,
)


@dataclass(frozen=True)
class SubscriptionFilters:
    status: SubscriptionStatus | None = None
    app_id: uuid.UUID | None = None
    node_id: uuid.UUID | None = None


class SubscriptionRepository(Repository[Subscription]):
    model = Subscription
    sort_columns = {
        "requested_at": Subscription.requested_at,
        "decided_at": Subscription.decided_at,
        "status": Subscription.status,
        "app_name": Subscription.app_name,
        "node_title": Subscription.node_title,
    }

    def matching(self, filters: SubscriptionFilters) -> Select[Subscription]:
        statement = select(Subscription)
        if filters.status is not None:
            statement = statement.where(Subscription.status == filters.status)
        if filters.app_id is not None:
            statement = statement.where(Subscription.app_id == filters.app_id)
        if filters.node_id is not None:
            statement = statement.where(Subscription.node_id == filters.node_id)
        return statement

    async def page_pending_first(
        self, statement: Select[Subscription], query: ListQuery
    ) -> Page[Subscription]:
        """A page in the query's order, pending subscriptions before every other."""
        return await self.page(statement.order_by(_PENDING_FIRST), query)

    async def for_update(self, subscription_id: uuid.UUID) -> Subscription | None:
        """The subscription, locked until the transaction ends and re-read, once the rows
        it references (its gateway connection, app and node) are held ``FOR KEY SHARE``:
        the order in which deleting a connection, an app or a node takes them
        (``core/db/locks.py``). Locked the other way round, a job recording a grant (which
        writes the subscription twice) deadlocked with an API's deletion revoking it."""
        references = select(
            Subscription.connection_id, Subscription.app_id, Subscription.node_id
        ).where(Subscription.id == subscription_id)
        parents = (await self.session.execute(references)).first()
        if parents is None:
            return None
        connection_id, app_id, node_id = parents
        await share_keys(self.session, GatewayConnection, connection_id)
        await share_keys(self.session, DeveloperApp, app_id)
        await share_keys(self.session, CatalogueNode, node_id)
        return await self.first(
            select(Subscription)
            .where(Subscription.id == subscription_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )

    async def of_app(self, app_id: uuid.UUID) -> list[Subscription]:
        return await self.all(
            select(Subscription)
            .where(Subscription.app_id == app_id)
            .order_by(Subscription.requested_at, Subscription.id)
        )

    async def live_for(
        self, app_id: uuid.UUID, node_id: uuid.UUID, statuses: Collection[SubscriptionStatus]
    ) -> Subscription | None:
        return await self.first(
            select(Subscription).where(
                Subscription.app_id == app_id,
                Subscription.node_id == node_id,
                Subscription.status.in_(list(statuses)),
            )
        )

    async def of_node_for_update(
        self, node_id: uuid.UUID, statuses: Collection[SubscriptionStatus]
    ) -> list[Subscription]:
        return await self.all(
            select(Subscription)
            .where(Subscription.node_id == node_id, Subscription.status.in_(list(statuses)))
            .order_by(Subscription.requested_at, Subscription.id)
            .with_for_update()
        )

    async def of_app_for_update(self, app_id: uuid.UUID) -> list[Subscription]:
        return await self.all(
            select(Subscription)
            .where(Subscription.app_id == app_id)
            .order_by(Subscription.requested_at, Subscription.id)
            .with_for_update()
        )

    async def due(self, now: datetime, *, limit: int) -> Sequence[Subscription]:
        """Subscriptions with remote work owed whose time has come, oldest first, locked
        (PostgreSQL: replicas sweeping at once take different rows)."""
        return await self.all(
            select(Subscription)
            .where(Subscription.remote_action != RemoteAction.NONE, Subscription.due_at <= now)
            .order_by(Subscription.due_at, Subscription.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
