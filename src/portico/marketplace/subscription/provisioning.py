"""The remote work itself, as the jobs worker runs it (``jobs.py``): give or take back a
subscription's access on its gateway connection, set a remote app's rotated key, delete the
remote app of a deleted portal app.

Each run reads what is owed in a short session, calls the connector holding no transaction
(the remote side may be slow or down), then writes the outcome in a transaction of its own:
success clears the work (a grant makes the subscription ``active``), a failure records the
error and the attempt and sets the next due time (``work.retry_delay``). An outcome is
written only if the work is still the one that was done (``remote_generation``): a
subscription revoked while its grant was under way is not made active; if that grant went
through, a withdrawal is owed again so that the access given is taken back.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.account import User, find_by_id
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.db.session import run_after_commit
from portico.core.settings import Settings
from portico.marketplace.connection.egress import outbound_for
from portico.marketplace.connection.models import GatewayConnection
from portico.marketplace.connection.repository import GatewayConnectionRepository
from portico.marketplace.connection.service import secrets_box
from portico.marketplace.connectors.base import Connector, ConnectorError, Outbound
from portico.marketplace.connectors.provisioning import Granted, Grantee, Target
from portico.marketplace.connectors.registry import CONNECTORS
from portico.marketplace.developer_app import keys
from portico.marketplace.developer_app.models import AppRemote, DeveloperApp, RemoteWork
from portico.marketplace.developer_app.repository import (
    AppRemoteRepository,
    DeveloperAppRepository,
)
from portico.marketplace.developer_app.service import open_key
from portico.marketplace.node.models import Bundle
from portico.marketplace.node.repository import NodeRepository
from portico.marketplace.subscription.models import (
    RemoteAction,
    Subscription,
    SubscriptionStatus,
)
from portico.marketplace.subscription.repository import SubscriptionRepository
from portico.marketplace.subscription.states import GRANTED
from portico.marketplace.subscription.work import owe, owe_remote, retry_delay


@dataclass(frozen=True)
class Gateway:
    """A connection's connector with its configuration, secrets opened."""

    connector: Connector
    config: Mapping[str, Any]
    outbound: Outbound


def gateway_of(connection: GatewayConnection, settings: Settings) -> Gateway:
    """``ConnectorError`` when the connection cannot be used (unknown source, credentials
    the server's keys no longer open)."""
    connector = CONNECTORS.get(connection.source)
    if connector is None:
        raise ConnectorError(f"the source type '{connection.source}' is not known")
    box = secrets_box(settings.signing_keys())
    try:
        opened = (
            json.loads(box.decrypt(connection.sealed_secrets)) if connection.sealed_secrets else {}
        )
    except ValueError:
        raise ConnectorError(
            f"the stored credentials of gateway connection '{connection.name}' cannot be "
            "decrypted with the server's keys; replace the connection with its full credentials"
        ) from None
    return Gateway(connector, {**connection.config, **opened}, outbound_for(settings))


def can_provision(connection: GatewayConnection | None) -> bool:
    """Whether access to a node of ``connection`` is given on a gateway at all."""
    if connection is None:
        return False
    connector = CONNECTORS.get(connection.source)
    return connector is not None and bool(connector.capabilities.get("subscription_provisioning"))


# ------------------------------------------------------------------------------ subscriptions


@dataclass(frozen=True)
class _Owed:
    action: RemoteAction
    generation: int
    gateway: Gateway
    connection_id: uuid.UUID
    # a grant's
    grantee: Grantee | None = None
    target: Target | None = None
    app_id: uuid.UUID | None = None
    #: when the key given was issued: a rotation meanwhile owes the remote app the new one
    key_issued_at: datetime | None = None
    # a withdrawal's
    remote_app_id: str | None = None
    product_id: str | None = None


async def sync_subscription(
    database: Database, clock: Clock, settings: Settings, subscription_id: uuid.UUID
) -> dict[str, Any]:
    """Do the remote work the subscription owes, once; the outcome as the job's result."""
    async with database.session() as session:
        subscription = await SubscriptionRepository(session).get(subscription_id)
        if subscription is None or subscription.remote_action is RemoteAction.NONE:
            return {"outcome": "nothing owed"}
        problem: str | None = None
        owed: _Owed | None = None
        try:
            owed = await _owed(session, subscription, settings)
        except ConnectorError as failed:
            problem = failed.message
        generation = subscription.remote_generation
    granted: Granted | None = None
    if owed is not None and owed.action is RemoteAction.GRANT:
        assert owed.grantee is not None and owed.target is not None
        try:
            granted = await owed.gateway.connector.grant(
                owed.gateway.config, owed.gateway.outbound, owed.grantee, owed.target
            )
        except ConnectorError as failed:
            problem = failed.message
    elif owed is not None and owed.remote_app_id is not None and owed.product_id is not None:
        try:
            await owed.gateway.connector.withdraw(
                owed.gateway.config,
                owed.gateway.outbound,
                app_id=owed.remote_app_id,
                product_id=owed.product_id,
            )
        except ConnectorError as failed:
            problem = failed.message
    return await _record(database, clock, subscription_id, generation, owed, granted, problem)


async def _owed(
    session: AsyncSession, subscription: Subscription, settings: Settings
) -> _Owed | None:
    """What to do on the remote side; None when there is nothing left to do there (a
    withdrawal on a connection since deleted: what was given there is out of reach)."""
    connection = None
    if subscription.connection_id is not None:
        connection = await GatewayConnectionRepository(session).get(subscription.connection_id)
    if connection is None:
        if subscription.remote_action is RemoteAction.WITHDRAW:
            return None
        raise ConnectorError("the gateway connection of this subscription was deleted")
    gateway = gateway_of(connection, settings)
    generation = subscription.remote_generation
    if subscription.remote_action is RemoteAction.WITHDRAW:
        remote = None
        if subscription.remote_id is not None:
            remote = await AppRemoteRepository(session).get(subscription.remote_id)
        return _Owed(
            RemoteAction.WITHDRAW,
            generation,
            gateway,
            connection.id,
            remote_app_id=remote.remote_app_id if remote is not None else None,
            product_id=subscription.remote_product_id,
        )
    app = None
    if subscription.app_id is not None:
        app = await DeveloperAppRepository(session).get(subscription.app_id)
    owner = await find_by_id(session, app.owner_id) if app is not None else None
    if app is None or owner is None:
        raise ConnectorError("the subscription's app no longer exists")
    if subscription.remote_target_id is None:
        raise ConnectorError("the subscribed node has no remote id on its connection")
    node = None
    if subscription.node_id is not None:
        node = await NodeRepository(session).get(subscription.node_id)
    try:
        key = open_key(keys.box_for(settings.signing_keys()), app)
    except ValueError:
        raise ConnectorError(
            "the app's key cannot be decrypted with the server's keys; rotate it"
        ) from None
    remotes = await AppRemoteRepository(session).of_app(app.id, connection.id)
    return _Owed(
        RemoteAction.GRANT,
        generation,
        gateway,
        connection.id,
        grantee=_grantee(owner, app, key, remotes),
        target=Target(
            kind="api" if subscription.node_bundle == Bundle.APIS.value else "product",
            remote_id=subscription.remote_target_id,
            title=subscription.node_title,
            quota=node.quota if node is not None and node.bundle is Bundle.APIS else None,
        ),
        app_id=app.id,
        key_issued_at=app.key_issued_at,
    )


def _grantee(owner: User, app: DeveloperApp, key: str, remotes: list[AppRemote]) -> Grantee:
    first, _, last = owner.display_name.strip().partition(" ")
    return Grantee(
        email=owner.email,
        first_name=first,
        last_name=last.strip(),
        app_name=app.name,
        app_key=key,
        known_apps={r.environment_id: r.remote_app_id for r in remotes},
    )


async def _record(
    database: Database,
    clock: Clock,
    subscription_id: uuid.UUID,
    generation: int,
    owed: _Owed | None,
    granted: Granted | None,
    problem: str | None,
) -> dict[str, Any]:
    now = clock.now()
    async with database.session() as session:
        async with session.begin():
            result = await _outcome(
                session, subscription_id, generation, owed, granted, problem, now
            )
        run_after_commit(session)  # wakes the workers for a withdrawal owed again
    return result


async def _outcome(
    session: AsyncSession,
    subscription_id: uuid.UUID,
    generation: int,
    owed: _Owed | None,
    granted: Granted | None,
    problem: str | None,
    now: datetime,
) -> dict[str, Any]:
    subscription = await SubscriptionRepository(session).for_update(subscription_id)
    if subscription is None:
        return {"outcome": "the subscription no longer exists"}
    if granted is not None and owed is not None:
        await _remember(session, subscription, owed, granted, now)
    if subscription.remote_generation != generation:
        if granted is not None and subscription.status not in GRANTED:
            # it ended while its access was being given: take that access back
            await owe(session, subscription, RemoteAction.WITHDRAW, now)
        return {"outcome": "superseded by a later change"}
    subscription.last_attempt_at = now
    if problem is not None:
        subscription.attempts += 1
        subscription.last_error = problem
        due = now + retry_delay(subscription.attempts)
        subscription.due_at = due
        await session.flush()
        return {
            "outcome": "failed; retried later",
            "error": problem,
            "attempts": subscription.attempts,
            "next_attempt_at": due.isoformat(),
        }
    if subscription.remote_action is RemoteAction.GRANT:
        subscription.status = SubscriptionStatus.ACTIVE
        subscription.activated_at = now
    subscription.remote_action = RemoteAction.NONE
    subscription.due_at = None
    subscription.last_error = None
    await session.flush()
    return {
        "outcome": "active" if subscription.status is SubscriptionStatus.ACTIVE else "withdrawn"
    }


async def _remember(
    session: AsyncSession,
    subscription: Subscription,
    owed: _Owed,
    granted: Granted,
    now: datetime,
) -> None:
    """Record what the grant made remotely: the remote app (per app, connection and
    environment) and the product granted. An app deleted meanwhile leaves a remote app
    whose removal is owed."""
    remotes = AppRemoteRepository(session)
    app = None
    if owed.app_id is not None:
        app = await DeveloperAppRepository(session).get(owed.app_id)
    app_exists = app is not None
    remote = None
    if app_exists and owed.app_id is not None:
        remote = await remotes.find(owed.app_id, owed.connection_id, granted.environment_id)
    if remote is None:
        remote = AppRemote(
            id=uuid.uuid4(),
            app_id=owed.app_id if app_exists else None,
            connection_id=owed.connection_id,
            environment_id=granted.environment_id,
            remote_developer_id=granted.developer_id,
            remote_app_id=granted.app_id,
            work=RemoteWork.NONE,
            attempts=0,
            created_at=now,
            updated_at=now,
        )
        await remotes.add(remote)
        if not app_exists:
            await owe_remote(session, remote, RemoteWork.REMOVE, now)
    else:
        remote.remote_developer_id = granted.developer_id
        remote.remote_app_id = granted.app_id
        remote.updated_at = now
    if app is not None and app.key_issued_at != owed.key_issued_at:
        # rotated while the grant was under way: the remote app holds the older key
        await owe_remote(session, remote, RemoteWork.SET_KEY, now)
    subscription.remote_id = remote.id
    subscription.remote_product_id = granted.product_id
    await session.flush()


# -------------------------------------------------------------------------------- remote apps


async def sync_remote_app(
    database: Database, clock: Clock, settings: Settings, remote_id: uuid.UUID
) -> dict[str, Any]:
    """Do the work a remote app owes (set the rotated key, or delete it), once."""
    key: str | None = None
    issued: datetime | None = None
    async with database.session() as session:
        remote = await AppRemoteRepository(session).get(remote_id)
        if remote is None or remote.work is RemoteWork.NONE:
            return {"outcome": "nothing owed"}
        work = remote.work
        remote_app_id = remote.remote_app_id
        problem: str | None = None
        gateway: Gateway | None = None
        connection = await GatewayConnectionRepository(session).get(remote.connection_id)
        try:
            if connection is None:  # cascaded with it; cannot happen while the row exists
                raise ConnectorError("the gateway connection was deleted")
            gateway = gateway_of(connection, settings)
            if work is RemoteWork.SET_KEY:
                app = None
                if remote.app_id is not None:
                    app = await DeveloperAppRepository(session).get(remote.app_id)
                if app is not None:
                    issued = app.key_issued_at
                    key = open_key(keys.box_for(settings.signing_keys()), app)
        except ConnectorError as failed:
            problem = failed.message
        except ValueError:
            problem = "the app's key cannot be decrypted with the server's keys; rotate it"
    if gateway is not None and problem is None:
        try:
            if work is RemoteWork.REMOVE:
                await gateway.connector.remove_app(
                    gateway.config, gateway.outbound, app_id=remote_app_id
                )
            elif key is not None:
                await gateway.connector.set_key(
                    gateway.config, gateway.outbound, app_id=remote_app_id, key=key
                )
        except ConnectorError as failed:
            problem = failed.message
    return await _record_remote(database, clock, remote_id, work, issued, problem)


async def _record_remote(
    database: Database,
    clock: Clock,
    remote_id: uuid.UUID,
    work: RemoteWork,
    issued: datetime | None,
    problem: str | None,
) -> dict[str, Any]:
    now = clock.now()
    async with database.session() as session:
        async with session.begin():
            result = await _remote_outcome(session, remote_id, work, issued, problem, now)
        run_after_commit(session)
    return result


async def _remote_outcome(
    session: AsyncSession,
    remote_id: uuid.UUID,
    work: RemoteWork,
    issued: datetime | None,
    problem: str | None,
    now: datetime,
) -> dict[str, Any]:
    remotes = AppRemoteRepository(session)
    remote = await remotes.for_update(remote_id)
    if remote is None:
        return {"outcome": "the remote app is no longer remembered"}
    if remote.work is not work:
        return {"outcome": "superseded by a later change"}
    if problem is not None:
        remote.attempts += 1
        remote.last_error = problem
        remote.due_at = now + retry_delay(remote.attempts)
        remote.updated_at = now
        await session.flush()
        return {"outcome": "failed; retried later", "error": problem}
    if work is RemoteWork.REMOVE:
        await remotes.delete(remote)
        return {"outcome": "removed"}
    app = None
    if remote.app_id is not None:
        app = await DeveloperAppRepository(session).get(remote.app_id)
    if app is not None and issued is not None and app.key_issued_at != issued:
        # rotated again while this key was being set: the newer key is owed
        await owe_remote(session, remote, RemoteWork.SET_KEY, now)
        return {"outcome": "superseded by a newer key"}
    remote.work = RemoteWork.NONE
    remote.due_at = None
    remote.last_error = None
    remote.updated_at = now
    await session.flush()
    return {"outcome": "key set"}
