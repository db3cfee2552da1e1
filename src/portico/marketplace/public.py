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
- the partner registration's pending relationship (:func:`request_membership`).

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

__all__ = [
    "REFRESH_ATTEMPTS",
    "REGISTRATIONS",
    "SURFACE",
    "TOKEN_ATTEMPTS",
    "USER_MODULE",
    "InvitationAccepted",
    "InvitationInvalid",
    "InvitationOwnerUnproven",
    "KeySetPublisher",
    "Me",
    "MyNotification",
    "MyOrganisation",
    "PortalApi",
    "PortalApiNotFound",
    "PortalApiRef",
    "PortalApiSummary",
    "PortalProduct",
    "PortalProductNotFound",
    "RefreshRequest",
    "TokenIssuanceDisabled",
    "TokenIssuer",
    "TokenRead",
    "TokenRequest",
    "accept_invitation",
    "check_organisation",
    "enforce_rate_limit",
    "ensure_issuance_enabled",
    "get_api",
    "get_product",
    "key_set_publisher",
    "list_apis",
    "list_products",
    "notifications",
    "profile",
    "request_membership",
    "token_issuer",
]

#: the marketplace module that owns accounts, as audit entries name it
USER_MODULE = "user"


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
