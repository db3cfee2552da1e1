"""What subscriptions do when something they hang on goes, registered when this module loads
(by the subscriptions endpoints: the module installed):

* an API or product node deleted (``node/hooks.py``): its pending, provisioning and active
  subscriptions are revoked with the deletion's reason, their access taken back durably;
* a developer app deleted (``developer_app/hooks.py``): its live subscriptions are
  cancelled and its remote apps deleted, durably;
* an app's key rotated: its remote apps are given the new key, durably.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.audit import Actor
from portico.core.clock import utcnow
from portico.marketplace.developer_app import hooks as app_hooks
from portico.marketplace.developer_app.models import DeveloperApp, RemoteWork
from portico.marketplace.developer_app.repository import AppRemoteRepository
from portico.marketplace.node import hooks as node_hooks
from portico.marketplace.node.models import Bundle, CatalogueNode
from portico.marketplace.subscription import service as subscription_service
from portico.marketplace.subscription.work import owe_remote


async def revoke_subscriptions(session: AsyncSession, node: CatalogueNode, reason: str) -> None:
    await subscription_service.revoke_for_deleted_node(session, node, reason, utcnow())


async def end_app(session: AsyncSession, app: DeveloperApp, now: datetime) -> None:
    await subscription_service.cancel_for_deleted_app(session, app.id, Actor.system(), now)
    for remote in await AppRemoteRepository(session).of_app(app.id):
        await owe_remote(session, remote, RemoteWork.REMOVE, now)


async def rekey_app(session: AsyncSession, app: DeveloperApp, now: datetime) -> None:
    for remote in await AppRemoteRepository(session).of_app(app.id):
        await owe_remote(session, remote, RemoteWork.SET_KEY, now)


node_hooks.on_delete(Bundle.APIS, revoke_subscriptions)
node_hooks.on_delete(Bundle.API_PRODUCTS, revoke_subscriptions)
app_hooks.on_delete(end_app)
app_hooks.on_rotate(rekey_app)
