"""Subscriptions: the developer's side (request, cancel, list an app's; called by the
developer portal API) and the administrators' (list, one, approve, reject, revoke,
analytics; the admin API's endpoints).

Every change is a transition of ``states.py`` (anything else is a 409 naming the state),
audited, and, when it gives or takes access on a gateway, owes that remote work durably
(``work.py``: a job now, retries until done). There is no ``auto_approve`` on catalogue
nodes: every request waits for an administrator.

Developer-side functions (keyword-only; ``actor`` defaults to the owner):

* ``request(session, owner, app_id, node_id, now) -> Subscription`` (pending; 404 for an
  app not the owner's, or a node that is not a published API or product; 409 when the app
  already has a live subscription to it)
* ``cancel(session, owner, subscription_id, now) -> Subscription`` (pending or active)
* ``list_for_app(session, owner_id, app_id) -> list[Subscription]``
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import User
from portico.core.audit import Actor
from portico.core.db.session import end_reads
from portico.core.errors import Conflict, NotFound, PorticoError
from portico.core.filter_values import FilterValues
from portico.core.pagination import ListQuery, Page
from portico.core.settings import Settings
from portico.marketplace import SURFACE
from portico.marketplace.access import SiteCaller
from portico.marketplace.connection.repository import GatewayConnectionRepository
from portico.marketplace.connectors.base import ConnectorError
from portico.marketplace.connectors.provisioning import Usage, Window
from portico.marketplace.developer_app import service as app_service
from portico.marketplace.developer_app.repository import AppRemoteRepository
from portico.marketplace.node.models import MODERATED, CatalogueNode
from portico.marketplace.node.repository import NodeRepository
from portico.marketplace.subscription import jobs as _jobs  # noqa: F401  (registers the kinds)
from portico.marketplace.subscription import notices
from portico.marketplace.subscription.models import (
    RemoteAction,
    Subscription,
    SubscriptionStatus,
)
from portico.marketplace.subscription.provisioning import can_provision, gateway_of
from portico.marketplace.subscription.repository import (
    SubscriptionFilters,
    SubscriptionRepository,
)
from portico.marketplace.subscription.schemas import SubscriptionRead
from portico.marketplace.subscription.states import GRANTED, LIVE, TRANSITIONS
from portico.marketplace.subscription.work import owe

MODULE = "subscriptions"
ENTITY = "subscription"


class SubscriptionNotFound(NotFound):
    default_detail = "subscription not found"


class SubscribableNotFound(NotFound):
    default_detail = "no published API or API product with this id"


class TransitionRefused(Conflict):
    default_detail = "the subscription's status does not allow this"


class AlreadySubscribed(Conflict):
    default_detail = "the app already has a subscription to this API or product"


class NoGatewayAccess(Conflict):
    default_detail = "the subscription has no access on a gateway to report on"


class AnalyticsUnavailable(PorticoError):
    status = 502
    kind = "analytics-unavailable"
    title = "Analytics Unavailable"
    default_detail = "The gateway connection could not be read."
    description: ClassVar[str] = (
        "A subscription's analytics are read from its gateway connection when they are "
        "asked for, and that read failed: the connection is down, refuses its credentials, "
        "or answered something unexpected. `detail` says which, in the connector's words. "
        "Nothing changed; ask again later, or check the connection (`POST "
        "/gateways/connections/{id}/test`)."
    )


# ------------------------------------------------------------------------ the developer's side


async def request(
    *,
    session: AsyncSession,
    owner: User,
    app_id: uuid.UUID,
    node_id: uuid.UUID,
    now: datetime,
    actor: Actor | None = None,
) -> Subscription:
    app = await app_service.get_for_owner(session=session, owner_id=owner.id, app_id=app_id)
    node = await NodeRepository(session).get(node_id)
    if node is None or node.bundle not in MODERATED or not node.published:
        raise SubscribableNotFound()
    repository = SubscriptionRepository(session)
    if await repository.live_for(app.id, node.id, LIVE) is not None:
        raise AlreadySubscribed(f"the app {app.name} already has a subscription to {node.title}")
    subscription = Subscription(
        id=uuid.uuid4(),
        app_id=app.id,
        app_name=app.name,
        owner_id=owner.id,
        node_id=node.id,
        node_bundle=node.bundle.value,
        node_title=node.title,
        status=SubscriptionStatus.PENDING,
        requested_at=now,
        remote_action=RemoteAction.NONE,
        remote_generation=0,
        attempts=0,
        created_at=now,
        updated_at=now,
    )
    await repository.add(subscription)
    await notices.tell_administrators(session, subscription, now)
    await _audit(
        session,
        actor or app_service.actor_of(owner),
        "request",
        subscription,
        f"{app.name} asked to subscribe to {node.title}",
        after=_snapshot(subscription),
    )
    return subscription


async def cancel(
    *,
    session: AsyncSession,
    owner: User,
    subscription_id: uuid.UUID,
    now: datetime,
    actor: Actor | None = None,
) -> Subscription:
    repository = SubscriptionRepository(session)
    subscription = await repository.for_update(subscription_id)
    if subscription is None or subscription.owner_id != owner.id or subscription.app_id is None:
        raise SubscriptionNotFound()
    before = _snapshot(subscription)
    await _end(session, subscription, "cancel", SubscriptionStatus.CANCELLED, None, now)
    await _audit(
        session,
        actor or app_service.actor_of(owner),
        "cancel",
        subscription,
        f"{subscription.app_name} cancelled its subscription to {subscription.node_title}",
        before,
        _snapshot(subscription),
    )
    return subscription


async def list_for_app(
    *, session: AsyncSession, owner_id: uuid.UUID, app_id: uuid.UUID
) -> list[Subscription]:
    """The app's subscriptions, oldest first, whatever their status."""
    app = await app_service.get_for_owner(session=session, owner_id=owner_id, app_id=app_id)
    return await SubscriptionRepository(session).of_app(app.id)


# -------------------------------------------------------------------- the administrators' side


async def list_(*, session: AsyncSession, query: ListQuery) -> Page[Subscription]:
    repository = SubscriptionRepository(session)
    return await repository.page_pending_first(repository.matching(filters(query.filters)), query)


async def get(*, session: AsyncSession, subscription_id: uuid.UUID) -> Subscription:
    subscription = await SubscriptionRepository(session).get(subscription_id)
    if subscription is None:
        raise SubscriptionNotFound()
    return subscription


async def approve(
    *, session: AsyncSession, caller: SiteCaller, subscription_id: uuid.UUID, now: datetime
) -> Subscription:
    """Pending → provisioning, and the grant owed to the node's gateway connection; a node
    with nothing to provision (portal-native, or a source that cannot provision) → active."""
    subscription = await _locked(session, subscription_id)
    before = _snapshot(subscription)
    _allowed(subscription, "approve")
    node = None
    if subscription.node_id is not None:
        node = await NodeRepository(session).get(subscription.node_id)
    connection = None
    if node is not None and node.connection_id is not None and node.remote_id is not None:
        connection = await GatewayConnectionRepository(session).get(node.connection_id)
    subscription.decided_at = now
    subscription.decided_by = caller.user.id
    subscription.updated_at = now
    if node is not None and can_provision(connection):
        assert connection is not None
        subscription.status = SubscriptionStatus.PROVISIONING
        subscription.connection_id = connection.id
        subscription.remote_target_id = node.remote_id
        await owe(session, subscription, RemoteAction.GRANT, now)
    else:
        subscription.status = SubscriptionStatus.ACTIVE
        subscription.activated_at = now
        await session.flush()
    await notices.tell_developer(session, subscription, "approved", now)
    summary = f"approved the subscription of {subscription.app_name} to {subscription.node_title}"
    await _admin_audit(session, caller, "approve", subscription, summary, before)
    return subscription


async def reject(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    subscription_id: uuid.UUID,
    reason: str,
    now: datetime,
) -> Subscription:
    return await _decide_end(
        session, caller, subscription_id, "reject", SubscriptionStatus.REJECTED, reason, now
    )


async def revoke(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    subscription_id: uuid.UUID,
    reason: str,
    now: datetime,
) -> Subscription:
    """Revoked at once in the portal; the access on the gateway is taken back durably."""
    return await _decide_end(
        session, caller, subscription_id, "revoke", SubscriptionStatus.REVOKED, reason, now
    )


async def _decide_end(
    session: AsyncSession,
    caller: SiteCaller,
    subscription_id: uuid.UUID,
    verb: str,
    status: SubscriptionStatus,
    reason: str,
    now: datetime,
) -> Subscription:
    """An administrator's rejection or revocation: ended with ``reason``, the developer
    told (the notice's word is the status: rejected, revoked), audited."""
    subscription = await _locked(session, subscription_id)
    before = _snapshot(subscription)
    subscription.decided_by = caller.user.id
    await _end(session, subscription, verb, status, reason, now)
    await notices.tell_developer(session, subscription, status.value, now)
    summary = (
        f"{status.value} the subscription of {subscription.app_name} to {subscription.node_title}"
    )
    await _admin_audit(session, caller, verb, subscription, summary, before)
    return subscription


async def revoke_for_deleted_node(
    session: AsyncSession, node: CatalogueNode, reason: str, now: datetime
) -> int:
    """The node is being deleted: its live subscriptions are revoked with ``reason`` and
    their developers told (the deletion's own audit entry names who deleted it; each
    revocation is recorded as the system's). How many were revoked."""
    subscriptions = await SubscriptionRepository(session).of_node_for_update(node.id, LIVE)
    for subscription in subscriptions:
        before = _snapshot(subscription)
        await _end(session, subscription, None, SubscriptionStatus.REVOKED, reason, now)
        await notices.tell_developer(session, subscription, "revoked", now)
        summary = (
            f"revoked the subscription of {subscription.app_name} to {subscription.node_title}: "
            f"{reason}"
        )
        await _audit(
            session,
            Actor.system(),
            "revoke",
            subscription,
            summary,
            before,
            _snapshot(subscription),
        )
    return len(subscriptions)


async def cancel_for_deleted_app(
    session: AsyncSession, app_id: uuid.UUID, owner: Actor, now: datetime
) -> None:
    """The app is being deleted: its live subscriptions are cancelled. Their access goes
    with the remote apps, whose removal the caller owes (``hooks.py``)."""
    for subscription in await SubscriptionRepository(session).of_app_for_update(app_id):
        if subscription.status not in LIVE:
            continue
        before = _snapshot(subscription)
        subscription.status = SubscriptionStatus.CANCELLED
        subscription.ended_at = subscription.updated_at = now
        await owe(session, subscription, RemoteAction.NONE, now)
        summary = f"cancelled the subscription of {subscription.app_name}: the app was deleted"
        after = _snapshot(subscription)
        await _audit(session, owner, "cancel", subscription, summary, before, after)


async def analytics(
    *,
    session: AsyncSession,
    subscription_id: uuid.UUID,
    window: Window,
    settings: Settings,
) -> Usage:
    """The subscription's traffic over ``window``, read from its gateway connection now
    (no transaction is held while it is read)."""
    subscription = await get(session=session, subscription_id=subscription_id)
    remote = None
    if subscription.remote_id is not None:
        remote = await AppRemoteRepository(session).get(subscription.remote_id)
    connection = None
    if subscription.connection_id is not None:
        connection = await GatewayConnectionRepository(session).get(subscription.connection_id)
    if remote is None or connection is None or subscription.remote_product_id is None:
        raise NoGatewayAccess(
            "the subscription has no access on a gateway to report on (it is "
            f"{subscription.status.value}, or its node is not from a gateway connection)"
        )
    product_id, remote_app_id = subscription.remote_product_id, remote.remote_app_id
    try:
        gateway = gateway_of(connection, settings)
    except ConnectorError as failed:
        raise AnalyticsUnavailable(failed.message) from None
    await end_reads(session)
    try:
        return await gateway.connector.usage(
            gateway.config,
            gateway.outbound,
            app_id=remote_app_id,
            product_id=product_id,
            window=window,
        )
    except ConnectorError as failed:
        raise AnalyticsUnavailable(failed.message) from None


def filters(raw: Mapping[str, str]) -> SubscriptionFilters:
    """``filter[status]``, ``filter[app]`` (an app's id), ``filter[node]`` (a node's id)."""
    values = FilterValues(raw)
    status = values.choice("status", SubscriptionStatus)
    app_id = values.identifier("app", "an app's id (a UUID)")
    node_id = values.identifier("node", "an API's or a product's id (a UUID)")
    values.check()
    return SubscriptionFilters(status=status, app_id=app_id, node_id=node_id)


# ------------------------------------------------------------------------------------ helpers


async def _locked(session: AsyncSession, subscription_id: uuid.UUID) -> Subscription:
    subscription = await SubscriptionRepository(session).for_update(subscription_id)
    if subscription is None:
        raise SubscriptionNotFound()
    return subscription


def _allowed(subscription: Subscription, action: str) -> None:
    transition = TRANSITIONS[action]
    if subscription.status not in transition.sources:
        allowed = " or ".join(sorted(s.value for s in transition.sources))
        raise TransitionRefused(
            f"cannot {action} a subscription that is {subscription.status.value} "
            f"(only one that is {allowed})"
        )


async def _end(
    session: AsyncSession,
    subscription: Subscription,
    action: str | None,
    status: SubscriptionStatus,
    reason: str | None,
    now: datetime,
) -> None:
    """End the subscription (``action``'s transition checked; None: a deletion, which ends
    any live one); what it granted, or may be granting, is owed back."""
    if action is not None:
        _allowed(subscription, action)
    granted = subscription.status in GRANTED
    subscription.status = status
    if reason is not None:
        subscription.reason = reason
    subscription.decided_at = subscription.decided_at if action == "cancel" else now
    subscription.ended_at = subscription.updated_at = now
    if granted and subscription.connection_id is not None:
        await owe(session, subscription, RemoteAction.WITHDRAW, now)
    else:
        await owe(session, subscription, RemoteAction.NONE, now)


def _snapshot(subscription: Subscription) -> dict[str, Any]:
    return SubscriptionRead.of(subscription).model_dump(mode="json")


async def _admin_audit(
    session: AsyncSession,
    caller: SiteCaller,
    verb: str,
    subscription: Subscription,
    summary: str,
    before: dict[str, Any],
) -> None:
    await caller.audit(
        session,
        f"{ENTITY}.{verb}",
        entity_type=ENTITY,
        entity_id=subscription.id,
        module=MODULE,
        summary=summary,
        before=before,
        after=_snapshot(subscription),
        bundle=subscription.node_bundle,
    )


async def _audit(
    session: AsyncSession,
    actor: Actor,
    verb: str,
    subscription: Subscription,
    summary: str,
    before: Any = None,
    after: Any = None,
) -> None:
    await audit.record(
        session,
        actor,
        action=f"{ENTITY}.{verb}",
        entity_type=ENTITY,
        entity_id=subscription.id,
        before=before,
        after=after,
        summary=summary,
        surface=SURFACE,
        bundle=subscription.node_bundle,
        module=MODULE,
    )
