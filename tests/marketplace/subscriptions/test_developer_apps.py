"""Developer apps through the service the developer portal API calls: the key shown once and
sealed at rest, names per owner, another owner's app not found; with a real gateway, a
rotated key reaches the remote app and a deleted app loses its access there."""

from __future__ import annotations

import uuid

import httpx
import pytest
from sqlalchemy import select

from portico.core.account import User
from portico.core.audit import AuditEntry
from portico.core.clock import utcnow
from portico.core.db.engine import Database
from portico.core.job_worker import JobWorker
from portico.core.settings import Settings
from portico.marketplace.developer_app import keys
from portico.marketplace.developer_app import service as app_service
from portico.marketplace.developer_app.models import DeveloperApp
from portico.marketplace.developer_app.schemas import DeveloperAppUpdate
from portico.marketplace.subscription import service as subscription_service
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.subscriptions.harness import (
    RemoteSide,
    developer_app,
    request_subscription,
)
from tests.support.waiting import eventually


async def test_the_key_is_shown_once_and_sealed_at_rest(
    database: Database, settings: Settings, developer: SiteAccount, site: SiteFactory
) -> None:
    app_id, key = await developer_app(database, settings, developer.id, "reporting")
    assert len(key) >= 32
    async with database.session() as session:
        app = await session.get(DeveloperApp, app_id)
        assert app is not None
        assert key not in app.sealed_key
        assert app.key_hint == key[:6]
        assert app_service.open_key(keys.box_for(settings.signing_keys()), app) == key
        audited = list(
            await session.scalars(select(AuditEntry).where(AuditEntry.entity_id == str(app_id)))
        )
    (created,) = audited
    assert created.action == "developer_app.create"
    assert key not in str(created.after)

    with pytest.raises(app_service.DeveloperAppNameTaken):
        await developer_app(database, settings, developer.id, "reporting")
    stranger = await site.account()
    async with database.session() as session:
        with pytest.raises(app_service.DeveloperAppNotFound):
            await app_service.get_for_owner(session=session, owner_id=stranger.id, app_id=app_id)
    await developer_app(database, settings, stranger.id, "reporting")  # names are per owner

    async with database.session() as session, session.begin():
        owner = await session.get(User, developer.id)
        assert owner is not None
        renamed = await app_service.update(
            session=session,
            owner=owner,
            app_id=app_id,
            data=DeveloperAppUpdate(name="reports", description="monthly"),
            actor=app_service.actor_of(owner),
            now=utcnow(),
        )
        assert (renamed.name, renamed.description) == ("reports", "monthly")


async def _approved(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    remote: RemoteSide,
    node: uuid.UUID,
    manager: SiteAccount,
    developer: SiteAccount,
) -> tuple[uuid.UUID, uuid.UUID, str]:
    app_id, key = await developer_app(database, settings, developer.id)
    subscription_id = await request_subscription(database, developer.id, app_id, node)
    approved = await client.post(
        url(f"/subscriptions/{subscription_id}/approve"), headers=manager.headers
    )
    assert approved.status_code == 200, approved.text

    async def active() -> bool:
        async with database.session() as session:
            found = await subscription_service.get(session=session, subscription_id=subscription_id)
        return found.status.value == "active"

    async def admitted() -> bool:
        return await remote.through_gateway(key) == 200

    await eventually(active, 30, what="the subscription to become active")
    await eventually(admitted, 10, what="the gateway to admit the key")
    return app_id, subscription_id, key


async def test_a_rotated_key_reaches_the_gateway(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    remote: RemoteSide,
    api_node: uuid.UUID,
    manager: SiteAccount,
    developer: SiteAccount,
    workers: JobWorker,
) -> None:
    app_id, _, old = await _approved(
        client, database, settings, remote, api_node, manager, developer
    )
    async with database.session() as session, session.begin():
        owner = await session.get(User, developer.id)
        assert owner is not None
        _, new = await app_service.rotate_key(
            session=session,
            owner=owner,
            app_id=app_id,
            box=keys.box_for(settings.signing_keys()),
            actor=app_service.actor_of(owner),
            now=utcnow(),
        )
    assert new != old

    async def swapped() -> bool:
        return await remote.through_gateway(new) == 200 and await remote.through_gateway(old) == 401

    await eventually(swapped, 30, what="the gateway to take the new key only")


async def test_deleting_the_app_cancels_its_subscriptions_and_its_remote_app(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    remote: RemoteSide,
    api_node: uuid.UUID,
    manager: SiteAccount,
    developer: SiteAccount,
    workers: JobWorker,
) -> None:
    app_id, subscription_id, key = await _approved(
        client, database, settings, remote, api_node, manager, developer
    )
    developers = await remote.call("GET", "/developers", params={"email": developer.email})
    apps = await remote.call(
        "GET", f"/developers/{developers['items'][0]['id']}/envs/{remote.env_id}/apps"
    )
    (remote_app,) = apps["items"]

    async with database.session() as session, session.begin():
        owner = await session.get(User, developer.id)
        assert owner is not None
        await app_service.delete(
            session=session,
            owner=owner,
            app_id=app_id,
            actor=app_service.actor_of(owner),
            now=utcnow(),
        )
    async with database.session() as session:
        ended = await subscription_service.get(session=session, subscription_id=subscription_id)
    assert ended.status.value == "cancelled"
    assert ended.app_id is None and ended.app_name == "my app"

    async def refused() -> bool:
        return await remote.through_gateway(key) == 401

    await eventually(refused, 30, what="the gateway to refuse the key")

    async def removed() -> bool:
        async with httpx.AsyncClient(
            base_url=remote.management.base_url, headers=remote.headers, timeout=10
        ) as http:
            found = await http.get(f"/api/orgs/{remote.org_id}/apps/{remote_app['id']}")
        return found.status_code == 404

    await eventually(removed, 30, what="the remote app to be deleted")
