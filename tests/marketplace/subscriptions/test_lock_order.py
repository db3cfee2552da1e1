"""A job recording a grant while the API is being deleted: both finish, none deadlocks.

The job writes the subscription twice in its transaction, and PostgreSQL then checks every
foreign key of the row again, locking the node ``FOR KEY SHARE``; the deletion holds the
node ``FOR UPDATE`` and reaches for the subscription next. The job takes the node first
(``core/db/locks.py``), so it waits for the deletion instead of deadlocking with it (CI saw
``deadlock detected`` here, and the subscription's access stayed given). SQLite locks the
whole database per transaction: PostgreSQL only.
"""

from __future__ import annotations

import asyncio
import os
import uuid

import httpx
import pytest
from sqlalchemy import select, text

from portico.core.clock import Clock, utcnow
from portico.core.db.engine import Database
from portico.core.settings import Settings
from portico.marketplace.developer_app.models import AppRemote
from portico.marketplace.node.models import CatalogueNode
from portico.marketplace.subscription import provisioning
from portico.marketplace.subscription import service as subscription_service
from portico.marketplace.subscription.models import RemoteAction, Subscription
from portico.marketplace.subscription.repository import SubscriptionRepository
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.subscriptions.harness import (
    RemoteSide,
    developer_app,
    request_subscription,
)
from tests.support.waiting import eventually

# decided at collection: under SQLite the fixtures (a second service, a developer, an API)
# would cost seconds before a runtime skip
pytestmark = pytest.mark.skipif(
    os.environ.get("PORTICO_TEST_STORE") != "postgresql",
    reason="row locks: PostgreSQL only (SQLite locks the whole database)",
)


async def _waiting_for_a_lock(database: Database) -> bool:
    async with database.session() as session:
        waiting = await session.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        )
    return bool(waiting)


async def test_a_grant_recorded_during_the_api_deletion_waits_for_it(
    client: httpx.AsyncClient,
    database: Database,
    clock: Clock,
    settings: Settings,
    remote: RemoteSide,
    api_node: uuid.UUID,
    manager: SiteAccount,
    developer: SiteAccount,
) -> None:
    app_id, _ = await developer_app(database, settings, developer.id)
    subscription_id = await request_subscription(database, developer.id, app_id, api_node)
    approved = await client.post(
        url(f"/subscriptions/{subscription_id}/approve"), headers=manager.headers
    )
    assert approved.status_code == 200, approved.text
    # no worker runs: the grant is done here, by hand, as the job does it
    async with database.session() as session:
        subscription = await SubscriptionRepository(session).get(subscription_id)
        assert subscription is not None and subscription.remote_action is RemoteAction.GRANT
        generation = subscription.remote_generation
        owed = await provisioning._owed(session, subscription, settings)
    assert owed is not None and owed.grantee is not None and owed.target is not None
    granted = await owed.gateway.connector.grant(
        owed.gateway.config, owed.gateway.outbound, owed.grantee, owed.target
    )

    async with database.session() as deleting, deleting.begin():
        node = await deleting.scalar(
            select(CatalogueNode).where(CatalogueNode.id == api_node).with_for_update()
        )
        assert node is not None
        recording = asyncio.create_task(
            provisioning._record(database, clock, subscription_id, generation, owed, granted, None)
        )
        await eventually(
            lambda: _waiting_for_a_lock(database), 30, what="the job to wait for the node"
        )
        assert not recording.done()
        revoked = await subscription_service.revoke_for_deleted_node(
            deleting, node, "the API 'orders' was deleted", utcnow()
        )
        assert revoked == 1
        await deleting.delete(node)
    outcome = await asyncio.wait_for(recording, 30)

    # the grant went through remotely after the revocation began: it is taken back
    assert outcome == {"outcome": "superseded by a later change"}
    async with database.session() as session:
        subscription = await session.get(Subscription, subscription_id)
        assert subscription is not None
        assert subscription.status.value == "revoked"
        assert subscription.remote_action is RemoteAction.WITHDRAW
        remote_app = await session.scalar(select(AppRemote).where(AppRemote.app_id == app_id))
        assert remote_app is not None and subscription.remote_id == remote_app.id
