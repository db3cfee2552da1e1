"""The session bypass: named users may call the admin API with their portal session instead
of an ID token. Off by default (``PORTICO_ADMIN_API_SESSION_BYPASS_USERS``, a JSON list of
emails); every use writes an ``auth.session_bypass`` audit event in a transaction of its own,
committed whatever becomes of the request (``access._session_bypass``).

The portal's session is the management service's access token carried in the
``portico_session`` cookie (the portal has no session store of its own yet). It is considered
only when no ``Authorization`` header is sent, so a token always wins. A cookie of a user who
is not listed, an invalid or expired cookie, or an account that can no longer sign in is a 401.

Cookies ride along on cross-site requests, so a state-changing call through the bypass must
come from the portal itself: one that a browser marks as cross-site (``Sec-Fetch-Site``) or
whose ``Origin`` is another site's is refused.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import User, find_by_id, normalise_email
from portico.core.audit import Actor
from portico.core.errors import Unauthorized
from portico.core.settings import Settings
from portico.core.tokens import AccessTokenService

COOKIE = "portico_session"
#: the audience ``portico.app`` gives the management service's access tokens
MANAGEMENT_AUDIENCE = "portico-management"
MODULE = "admin_api"
NOT_ACCEPTED = "session not accepted for the admin API; use an ID token"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def enabled_for(settings: Settings) -> frozenset[str]:
    return frozenset(normalise_email(e) for e in settings.admin_api_session_bypass_users)


def _session_tokens(request: Request) -> AccessTokenService:
    # The admin API's own state has no management tokens: build the verifier exactly as the
    # control-plane app does, once.
    state = request.app.state
    existing: AccessTokenService | None = getattr(state, "session_tokens", None)
    if existing is None:
        settings: Settings = state.settings
        existing = state.session_tokens = AccessTokenService(
            settings.signing_keys(),
            state.clock,
            ttl_seconds=settings.access_token_ttl_seconds,
            audience=MANAGEMENT_AUDIENCE,
        )
    return existing


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def same_site(request: Request, settings: Settings) -> bool:
    if request.method in _SAFE_METHODS:
        return True
    if request.headers.get("sec-fetch-site", "").lower() == "cross-site":
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True  # not a browser's cross-origin request (they always send Origin)
    allowed = {_origin(str(request.base_url))}
    if settings.public_url:
        allowed.add(_origin(settings.public_url))
    return origin.lower() in allowed


async def session_user(request: Request, session: AsyncSession) -> User | None:
    """The account whose portal session authenticates this request, None when the bypass
    does not apply (off, or no cookie); :class:`Unauthorized` when it applies and fails."""
    settings: Settings = request.app.state.settings
    allowed = enabled_for(settings)
    raw = request.cookies.get(COOKIE)
    if not allowed or not raw:
        return None
    try:
        claims = _session_tokens(request).verify(raw)
        user_id = uuid.UUID(str(claims["sub"]))
    except (Unauthorized, ValueError):
        raise Unauthorized(NOT_ACCEPTED) from None
    user = await find_by_id(session, user_id)
    if user is None or not user.can_sign_in or normalise_email(user.email) not in allowed:
        raise Unauthorized(NOT_ACCEPTED)
    if not same_site(request, settings):
        raise Unauthorized("the session bypass does not accept cross-site requests")
    return user


async def record_use(
    session: AsyncSession, actor: Actor, request: Request, *, surface: str
) -> None:
    # method and path only: a query string may carry anything
    await audit.record(
        session,
        actor,
        action="auth.session_bypass",
        entity_type="user",
        entity_id=actor.id,
        summary=f"{request.method} {request.url.path} with the portal session instead of a token",
        surface=surface,
        module=MODULE,
    )
