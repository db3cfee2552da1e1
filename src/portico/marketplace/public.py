"""The marketplace's public interface: the developer portal's contract with it.

``portico.portal`` imports nothing of ``portico.marketplace`` but this module; every other
module of the marketplace is internal to it and may change without the portal noticing.
What the portal needs and gets here:

- the audit coordinates of what it does to marketplace accounts (a registration creates one):
  :data:`SURFACE` and :data:`USER_MODULE`;
- the rate limit shared with the admin API's sign-ins (one limiter per process, per client
  address): :data:`REGISTRATIONS` and :func:`enforce_rate_limit`;
- the publication of the public keys of the admin API's ID tokens (the JWKS):
  :func:`key_set_publisher`, typed by the :class:`KeySetPublisher` protocol;
- sign-in with the admin API's own tokens and rules (:class:`TokenIssuer`, made from the
  admin API's application by :func:`token_issuer`; the token endpoints' rate limits and
  bodies), so that one ID token serves both surfaces;
- the storefront (``storefront/``): published APIs and products as a caller may see them;
- the developer's own account (``developer/``): profile, notifications, invitations;
- the partner registration's pending relationship (:func:`request_membership`);
- the developer's apps (``developer_app/``: the key shown at creation and rotation only)
  and their subscriptions and usage (``subscription/``), each an app of the caller's only;
- whether a feature's module is installed and switched on (:func:`feature_installed`,
  :func:`ensure_feature_on`): the portal's apps and subscriptions follow ``subscriptions``.

Adding to it is a change of the contract: keep it small, and wrap rather than re-export
what the portal should not depend on the shape of.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Protocol

from fastapi import FastAPI, Request
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.account import User
from portico.core.audit import Actor
from portico.core.clock import Clock
from portico.core.errors import Unauthorized, ValidationFailed
from portico.core.filter_values import FilterValues
from portico.core.pagination import ListQuery, Page
from portico.core.ratelimit import Limit
from portico.core.refresh import RefreshTokenStore
from portico.core.sealing import SecretBox
from portico.core.settings import Settings
from portico.marketplace import SURFACE
from portico.marketplace.auth import ratelimit
from portico.marketplace.auth import service as auth_service
from portico.marketplace.auth.keys import IdTokenService
from portico.marketplace.auth.ratelimit import REFRESH_ATTEMPTS, REGISTRATIONS, TOKEN_ATTEMPTS
from portico.marketplace.auth.schemas import RefreshRequest, TokenRead, TokenRequest
from portico.marketplace.auth.service import TokenIssuanceDisabled
from portico.marketplace.connectors.provisioning import Usage, Window
from portico.marketplace.developer.schemas import (
    InvitationAccepted,
    Me,
    MyNotification,
    MyOrganisation,
)
from portico.marketplace.developer.service import (
    InvitationInvalid,
    InvitationOwnerUnproven,
    accept_invitation,
    notifications,
    profile,
)
from portico.marketplace.developer_app import keys as app_keys
from portico.marketplace.developer_app import service as app_service
from portico.marketplace.developer_app.models import DeveloperApp
from portico.marketplace.developer_app.schemas import (
    Credential,
    DeveloperAppCreate,
    DeveloperAppRead,
    DeveloperAppUpdate,
    DeveloperAppWithKey,
)
from portico.marketplace.developer_app.service import DeveloperAppNameTaken, DeveloperAppNotFound
from portico.marketplace.feature import service as feature_service
from portico.marketplace.feature.gate import FeatureDisabled
from portico.marketplace.modules import installed
from portico.marketplace.organisation import approvals
from portico.marketplace.organisation.repository import OrganisationRepository
from portico.marketplace.storefront.schemas import (
    PortalApi,
    PortalApiRef,
    PortalApiSummary,
    PortalProduct,
)
from portico.marketplace.storefront.service import (
    PortalApiNotFound,
    PortalProductNotFound,
    get_api,
    get_product,
    list_apis,
    list_products,
)
from portico.marketplace.subscription import hooks as _subscription_hooks  # noqa: F401
from portico.marketplace.subscription import service as subscription_service
from portico.marketplace.subscription.models import SubscriptionStatus
from portico.marketplace.subscription.repository import (
    SubscriptionFilters,
    SubscriptionRepository,
)
from portico.marketplace.subscription.schemas import (
    LatencyRead,
    QuotaRead,
    SubscribedNode,
    SubscriptionAnalytics,
    SubscriptionRead,
)
from portico.marketplace.subscription.service import (
    AlreadySubscribed,
    AnalyticsUnavailable,
    NoGatewayAccess,
    SubscriptionNotFound,
    TransitionRefused,
)

__all__ = [
    "REFRESH_ATTEMPTS",
    "REGISTRATIONS",
    "SUBSCRIPTIONS_FEATURE",
    "SURFACE",
    "TOKEN_ATTEMPTS",
    "USER_MODULE",
    "AlreadySubscribed",
    "AnalyticsUnavailable",
    "Credential",
    "DeveloperAppCreate",
    "DeveloperAppNameTaken",
    "DeveloperAppNotFound",
    "DeveloperAppRead",
    "DeveloperAppUpdate",
    "DeveloperAppWithKey",
    "FeatureDisabled",
    "InvitationAccepted",
    "InvitationInvalid",
    "InvitationOwnerUnproven",
    "KeySetPublisher",
    "LatencyRead",
    "Me",
    "MyNotification",
    "MyOrganisation",
    "PortalApi",
    "PortalApiNotFound",
    "PortalApiRef",
    "PortalApiSummary",
    "PortalProduct",
    "PortalProductNotFound",
    "QuotaRead",
    "RefreshRequest",
    "SubscribedNode",
    "SubscriptionAnalytics",
    "SubscriptionNotFound",
    "SubscriptionRead",
    "SubscriptionStatus",
    "TokenIssuanceDisabled",
    "TokenIssuer",
    "TokenRead",
    "TokenRequest",
    "TransitionRefused",
    "Usage",
    "Window",
    "accept_invitation",
    "app_usage",
    "cancel_subscription",
    "check_organisation",
    "create_app",
    "delete_app",
    "enforce_rate_limit",
    "ensure_feature_on",
    "ensure_issuance_enabled",
    "feature_installed",
    "get_api",
    "get_app",
    "get_product",
    "get_subscription",
    "key_set_publisher",
    "list_apis",
    "list_apps",
    "list_products",
    "list_subscriptions",
    "notifications",
    "profile",
    "rate_limited",
    "request_membership",
    "rotate_app_key",
    "subscribe",
    "token_issuer",
    "update_app",
]

#: the marketplace module that owns accounts, as audit entries name it
USER_MODULE = "user"


#: ``enforce_rate_limit`` as a route dependency (every request counts, whatever its body)
rate_limited = ratelimit.rate_limited


async def enforce_rate_limit(request: Request, limit: Limit) -> None:
    """Count the request against its client address's budget for ``limit``; 429
    (``TooManyRequests``, with ``Retry-After``) once it is spent."""
    await ratelimit.enforce(request, limit)


class KeySetPublisher(Protocol):
    async def jwks(self, session: AsyncSession) -> dict[str, Any]:
        """``{"keys": [public JWK, ...]}``, retired keys included."""
        ...


def key_set_publisher(box: SecretBox, clock: Clock) -> KeySetPublisher:
    """Publishes the stored public keys of the admin API's ID tokens; it reads them only, so
    no issuer is involved (one per process is enough: it keeps no per-request state)."""
    return IdTokenService(box, clock, issuer="")


# -- sign-in ----------------------------------------------------------------------------------


class TokenIssuer:
    """The admin API's token issuance and verification, for the portal: the same ID tokens
    (one issuer, one audience, one key set), the same refresh tokens, the same rules and
    audit (``auth/service.py``). One per process, shared with the admin API."""

    def __init__(self, id_tokens: IdTokenService, refresh_tokens: RefreshTokenStore) -> None:
        self._id_tokens = id_tokens
        self._refresh_tokens = refresh_tokens

    async def sign_in(
        self, session: AsyncSession, *, email: str, password: str, actor: Actor, clock: Clock
    ) -> TokenRead:
        """Tokens for an account that can sign in; the uniform 401 otherwise."""
        return await auth_service.sign_in(
            session=session,
            id_tokens=self._id_tokens,
            refresh_tokens=self._refresh_tokens,
            email=email,
            password=password,
            actor=actor,
            clock=clock,
        )

    async def refresh(
        self, session: AsyncSession, *, refresh_token: str, actor: Actor
    ) -> TokenRead:
        """A new ID token and the refresh token's successor (reuse revokes the family)."""
        return await auth_service.refresh(
            session=session,
            id_tokens=self._id_tokens,
            refresh_tokens=self._refresh_tokens,
            raw_refresh_token=refresh_token,
            actor=actor,
        )

    async def subject(self, session: AsyncSession, token: str) -> uuid.UUID:
        """The account a valid ID token names; ``Unauthorized`` (or ``TokenExpired``)
        otherwise. Whether the account may still sign in is the caller's to check."""
        claims = await self._id_tokens.verify(session, token)
        try:
            return uuid.UUID(str(claims["sub"]))
        except ValueError:
            raise Unauthorized("invalid token") from None


def token_issuer(admin_api: FastAPI) -> TokenIssuer:
    """The issuer of the admin API application ``admin_api`` (``create_marketplace_app``)."""
    state = admin_api.state
    return TokenIssuer(state.id_tokens, state.refresh_tokens)


async def ensure_issuance_enabled(*, session: AsyncSession, settings: Settings) -> None:
    """503 ``token-issuance-disabled`` until an operator sets the web API key."""
    await auth_service.ensure_issuance_enabled(session=session, settings=settings)


# -- partner registration ---------------------------------------------------------------------


async def check_organisation(session: AsyncSession, organisation_id: uuid.UUID) -> None:
    """400 naming ``/organisation`` when no portal organisation has this id."""
    if await OrganisationRepository(session).get(organisation_id) is None:
        raise ValidationFailed.at(
            "/organisation", f"organisation: no portal organisation has id {organisation_id}"
        )


async def request_membership(
    session: AsyncSession, *, user: User, organisation_id: uuid.UUID, now: datetime
) -> uuid.UUID:
    """A registration naming the organisation: a pending relationship, which waits in
    ``/organisations/{group}/approvals``; its id."""
    membership = await approvals.request_membership(
        session, user=user, organisation_id=organisation_id, now=now
    )
    return membership.id


# -- developer apps ---------------------------------------------------------------------------
# An app of another account is not found (404). The clear key leaves the marketplace in the
# answers of ``create_app`` and ``rotate_app_key`` only (``DeveloperAppWithKey``).


def _with_key(app: DeveloperApp, key: str) -> DeveloperAppWithKey:
    read = DeveloperAppRead.of(app)
    return DeveloperAppWithKey(**read.model_dump(), credentials=[Credential(key=key)])


async def create_app(
    *,
    session: AsyncSession,
    owner: User,
    data: DeveloperAppCreate,
    settings: Settings,
    actor: Actor,
    now: datetime,
) -> DeveloperAppWithKey:
    """A new app and its ``key-auth`` key, in clear this once (409 for a name taken)."""
    app, key = await app_service.create(
        session=session,
        owner=owner,
        data=data,
        box=app_keys.box_for(settings.signing_keys()),
        actor=actor,
        now=now,
    )
    return _with_key(app, key)


async def list_apps(
    *, session: AsyncSession, owner_id: uuid.UUID, query: ListQuery
) -> Page[DeveloperAppRead]:
    page = await app_service.list_for_owner(session=session, owner_id=owner_id, query=query)
    return Page(
        items=[DeveloperAppRead.of(app) for app in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )


async def get_app(
    *, session: AsyncSession, owner_id: uuid.UUID, app_id: uuid.UUID
) -> DeveloperAppRead:
    app = await app_service.get_for_owner(session=session, owner_id=owner_id, app_id=app_id)
    return DeveloperAppRead.of(app)


async def update_app(
    *,
    session: AsyncSession,
    owner: User,
    app_id: uuid.UUID,
    data: DeveloperAppUpdate,
    actor: Actor,
    now: datetime,
) -> DeveloperAppRead:
    app = await app_service.update(
        session=session, owner=owner, app_id=app_id, data=data, actor=actor, now=now
    )
    return DeveloperAppRead.of(app)


async def delete_app(
    *, session: AsyncSession, owner: User, app_id: uuid.UUID, actor: Actor, now: datetime
) -> None:
    """The app goes; its live subscriptions are cancelled and its gateway apps removed."""
    await app_service.delete(session=session, owner=owner, app_id=app_id, actor=actor, now=now)


async def rotate_app_key(
    *,
    session: AsyncSession,
    owner: User,
    app_id: uuid.UUID,
    settings: Settings,
    actor: Actor,
    now: datetime,
) -> DeveloperAppWithKey:
    """A new key, in clear this once; the old one stops working (on the gateways as soon as
    they are given the new one)."""
    app, key = await app_service.rotate_key(
        session=session,
        owner=owner,
        app_id=app_id,
        box=app_keys.box_for(settings.signing_keys()),
        actor=actor,
        now=now,
    )
    return _with_key(app, key)


# -- subscriptions ----------------------------------------------------------------------------


async def subscribe(
    *,
    session: AsyncSession,
    owner: User,
    app_id: uuid.UUID,
    api: uuid.UUID | None,
    product: uuid.UUID | None,
    actor: Actor,
    now: datetime,
) -> SubscriptionRead:
    """A pending subscription of the app to an API or a product (one of them). A node the
    caller may not see in the storefront is not found, as one that does not exist."""
    await app_service.get_for_owner(session=session, owner_id=owner.id, app_id=app_id)
    if api is not None:
        await get_api(session=session, user_id=owner.id, node_id=api)
        node_id = api
    else:
        assert product is not None
        await get_product(session=session, user_id=owner.id, node_id=product)
        node_id = product
    subscription = await subscription_service.request(
        session=session, owner=owner, app_id=app_id, node_id=node_id, now=now, actor=actor
    )
    return SubscriptionRead.of(subscription)


async def list_subscriptions(
    *, session: AsyncSession, owner_id: uuid.UUID, app_id: uuid.UUID, query: ListQuery
) -> Page[SubscriptionRead]:
    """A page of the app's subscriptions, whatever their status (``filter[status]`` narrows
    them to one); sorts ``requested_at`` (default), ``status``, ``node_title``."""
    await app_service.get_for_owner(session=session, owner_id=owner_id, app_id=app_id)
    values = FilterValues(query.filters)
    status = values.choice("status", SubscriptionStatus)
    values.check()
    repository = SubscriptionRepository(session)
    page = await repository.page(
        repository.matching(SubscriptionFilters(status=status, app_id=app_id)), query
    )
    return Page(
        items=[SubscriptionRead.of(s) for s in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )


async def get_subscription(
    *, session: AsyncSession, owner_id: uuid.UUID, app_id: uuid.UUID, subscription_id: uuid.UUID
) -> SubscriptionRead:
    """One of the app's subscriptions."""
    await app_service.get_for_owner(session=session, owner_id=owner_id, app_id=app_id)
    found = await subscription_service.get(session=session, subscription_id=subscription_id)
    if found.app_id != app_id or found.owner_id != owner_id:
        raise SubscriptionNotFound()
    return SubscriptionRead.of(found)


async def cancel_subscription(
    *,
    session: AsyncSession,
    owner: User,
    app_id: uuid.UUID,
    subscription_id: uuid.UUID,
    actor: Actor,
    now: datetime,
) -> None:
    """Cancel one of the app's subscriptions (409 when its status does not allow it)."""
    await get_subscription(
        session=session, owner_id=owner.id, app_id=app_id, subscription_id=subscription_id
    )
    await subscription_service.cancel(
        session=session, owner=owner, subscription_id=subscription_id, now=now, actor=actor
    )


async def app_usage(
    *,
    session: AsyncSession,
    owner_id: uuid.UUID,
    app_id: uuid.UUID,
    window: Window,
    settings: Settings,
) -> list[Usage]:
    """The usage of each of the app's active subscriptions that holds access on a gateway,
    read from its gateway connection now, one after the other (no transaction is held while
    each is read); 502 ``AnalyticsUnavailable`` when one cannot be read."""
    subscriptions = await subscription_service.list_for_app(
        session=session, owner_id=owner_id, app_id=app_id
    )
    reported = [
        s.id
        for s in subscriptions
        if s.status is SubscriptionStatus.ACTIVE and s.remote_product_id is not None
    ]
    usages = []
    for subscription_id in reported:
        try:
            usages.append(
                await subscription_service.analytics(
                    session=session,
                    subscription_id=subscription_id,
                    window=window,
                    settings=settings,
                )
            )
        except NoGatewayAccess:
            continue  # its access went while the others were read: nothing to report
    return usages


# ------------------------------------------------------------------ features

#: the admin API module (and feature) the portal's apps and subscriptions belong to
SUBSCRIPTIONS_FEATURE = "subscriptions"


def feature_installed(settings: Settings, key: str) -> bool:
    """Whether the module of feature ``key`` is installed (``PORTICO_MARKETPLACE_MODULES``):
    the portal routes it for only then."""
    return key in {module.name for module in installed(settings.marketplace_modules)}


async def ensure_feature_on(session: AsyncSession, key: str) -> None:
    """``FeatureDisabled`` (403 ``/problems/feature-disabled``) when an administrator
    switched feature ``key`` off platform-wide: the portal's routes of that feature are off
    with the admin API's."""
    if not await feature_service.is_enabled(session, key):
        raise FeatureDisabled(key, await feature_service.notice(session, key))
