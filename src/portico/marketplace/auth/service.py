"""Token issuance of the marketplace admin API: sign-in, refresh, and the identity provider's
web API key without which neither runs.

Failed sign-ins are indistinguishable: an unknown email, a wrong password, and an account that
cannot sign in (blocked, pending, rejected, invited, no password) all verify one argon2 hash
(a dummy one when there is no account) and end in the same 401. Tokens and passwords are never
logged or audited. A successful sign-in is recorded (``auth.sign_in``), and so is each
refresh (``auth.refresh``) and each reuse of a used refresh token (``auth.refresh_reuse``,
which revoked its family: recorded in the transaction that revocation commits, although the
request fails with 401).
"""

from __future__ import annotations

import logging
from functools import cache

from anyio import to_thread
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import User, find_by_email, find_by_id
from portico.core.audit import Actor
from portico.core.clock import Clock
from portico.core.errors import ServiceUnavailable, Unauthorized
from portico.core.passwords import hash_password, needs_rehash, verify_password
from portico.core.refresh import INVALID as INVALID_REFRESH
from portico.core.refresh import RefreshTokenReused, RefreshTokenStore
from portico.core.saml import store as saml_store
from portico.core.sealing import SecretBox
from portico.core.settings import Settings
from portico.marketplace import SURFACE
from portico.marketplace.auth.keys import IdTokenService
from portico.marketplace.auth.models import SiteSetting
from portico.marketplace.auth.repository import SiteSettingRepository
from portico.marketplace.auth.schemas import TokenRead

logger = logging.getLogger("portico.marketplace.auth")

MODULE = "admin_api"
WEB_API_KEY = "admin_api.idp_web_api_key"
MAX_WEB_API_KEY_LENGTH = 1024
INVALID_CREDENTIALS = "invalid email or password"
INVALID_SAML_CODE = "invalid sign-in code"


class TokenIssuanceDisabled(ServiceUnavailable):
    kind = "token-issuance-disabled"
    title = "Token Issuance Disabled"
    description = (
        "The admin API issues no tokens until an operator sets the identity provider's web "
        "API key (`portico admin-api set-web-api-key`, or `PORTICO_IDP_WEB_API_KEY`). Ask "
        "the operator to set it, then sign in again."
    )
    default_detail = (
        "token issuance is disabled until an operator sets the identity provider's web API "
        "key (`portico admin-api set-web-api-key`, or PORTICO_IDP_WEB_API_KEY)"
    )


class RefreshRefused(Unauthorized):
    """The family of a token whose account can no longer sign in is revoked for good: the
    revocation must survive the failed request."""

    commit = True


# ---------------------------------------------------------------------------- web API key


async def issuance_enabled(*, session: AsyncSession, settings: Settings) -> bool:
    configured = settings.idp_web_api_key
    if configured is not None and configured.get_secret_value().strip():
        return True
    return await SiteSettingRepository(session).is_stored(WEB_API_KEY)


async def ensure_issuance_enabled(*, session: AsyncSession, settings: Settings) -> None:
    if not await issuance_enabled(session=session, settings=settings):
        raise TokenIssuanceDisabled()


def check_web_api_key(value: str) -> str:
    """The key as stored; ``ValueError`` saying what is wrong with it."""
    key = value.strip()
    if not key:
        raise ValueError("the web API key is empty")
    if len(key) > MAX_WEB_API_KEY_LENGTH:
        raise ValueError(f"the web API key is longer than {MAX_WEB_API_KEY_LENGTH} characters")
    if any(not ch.isprintable() or ch.isspace() for ch in key):
        raise ValueError("the web API key must not contain spaces or control characters")
    return key


async def set_web_api_key(
    *, session: AsyncSession, box: SecretBox, value: str, actor: Actor, clock: Clock
) -> None:
    """Store the key encrypted under the server secret (never returned by any endpoint)."""
    key = check_web_api_key(value)
    row = await SiteSettingRepository(session).get(WEB_API_KEY)
    verb = "set" if row is None else "replaced"
    if row is None:
        row = SiteSetting(key=WEB_API_KEY, secret=True)
        session.add(row)
    row.value = box.encrypt(key)
    row.secret = True
    row.updated_at = clock.now()
    await session.flush()
    await audit.record(
        session,
        actor,
        action="site_setting.update",
        entity_type="site_setting",
        entity_id=WEB_API_KEY,
        summary=f"{verb} the identity provider's web API key; token issuance is enabled",
        surface=SURFACE,
        module=MODULE,
    )


async def read_web_api_key(*, session: AsyncSession, box: SecretBox) -> str | None:
    row = await SiteSettingRepository(session).get(WEB_API_KEY)
    return None if row is None else box.decrypt(row.value)


# ---------------------------------------------------------------------------- tokens


@cache
def _dummy_ready() -> bool:
    # verify_password hashes its dummy on first need; pay that once, on the first attempt of
    # any kind, so that the first unknown email of a process is not the slow one.
    verify_password(None, "")
    return True


def _check_password(password_hash: str | None, password: str) -> bool:
    _dummy_ready()
    return verify_password(password_hash, password)


async def sign_in(
    *,
    session: AsyncSession,
    id_tokens: IdTokenService,
    refresh_tokens: RefreshTokenStore,
    email: str,
    password: str,
    actor: Actor,
    clock: Clock,
) -> TokenRead:
    """Exchange an email and password for an ID token and a refresh token. Any account that
    can sign in gets tokens; what it may do is each endpoint's permission check."""
    user = await find_by_email(session, email)
    # argon2 takes tens of milliseconds of CPU: off the event loop (the C code drops the GIL).
    ok = await to_thread.run_sync(_check_password, user.password_hash if user else None, password)
    if user is None or not ok or not user.can_sign_in:
        raise Unauthorized(INVALID_CREDENTIALS)
    if user.password_hash is not None and needs_rehash(user.password_hash):
        user.password_hash = await to_thread.run_sync(hash_password, password)
    return await _signed_in(
        session, id_tokens, refresh_tokens, user, actor, clock, "signed in to the admin API"
    )


async def sign_in_with_saml_code(
    *,
    session: AsyncSession,
    id_tokens: IdTokenService,
    refresh_tokens: RefreshTokenStore,
    code: str,
    verifier: str | None,
    actor: Actor,
    clock: Clock,
) -> TokenRead:
    """Exchange the one-time code a SAML sign-in for the admin API ended with (``…/saml/login
    ?client=admin-api``) for an ID token and a refresh token: the identity provider vouched
    for the account; what it may do is still each endpoint's permission check."""
    redeemed = await saml_store.redeem_code(
        session, code=code, verifier=verifier, target="admin-api", now=clock.now()
    )
    user = None if redeemed is None else await find_by_id(session, redeemed.user_id)
    if user is None or not user.can_sign_in:
        raise Unauthorized(INVALID_SAML_CODE)
    return await _signed_in(
        session,
        id_tokens,
        refresh_tokens,
        user,
        actor,
        clock,
        "signed in to the admin API through an identity provider (SAML)",
    )


async def _signed_in(
    session: AsyncSession,
    id_tokens: IdTokenService,
    refresh_tokens: RefreshTokenStore,
    user: User,
    actor: Actor,
    clock: Clock,
    summary: str,
) -> TokenRead:
    """A sign-in that succeeded: when, in the audit log, and the account's tokens."""
    user.last_login_at = clock.now()
    await audit.record(
        session,
        Actor(id=user.id, email=user.email, request_id=actor.request_id, ip=actor.ip),
        action="auth.sign_in",
        entity_type="user",
        entity_id=user.id,
        summary=summary,
        surface=SURFACE,
        module=MODULE,
    )
    issued = await refresh_tokens.issue(session, subject_id=user.id)
    return await _tokens(session, id_tokens, user, issued.token)


async def refresh(
    *,
    session: AsyncSession,
    id_tokens: IdTokenService,
    refresh_tokens: RefreshTokenStore,
    raw_refresh_token: str,
    actor: Actor,
) -> TokenRead:
    """A new ID token and the refresh token's successor; a reused token revokes its family.
    ``actor`` is the anonymous caller (its request id and address)."""
    try:
        issued = await refresh_tokens.rotate(session, raw_refresh_token)
    except RefreshTokenReused as reuse:
        logger.warning("a used admin API refresh token was presented again; family revoked")
        # Whoever presented it may be the thief or the owner: the actor stays anonymous, the
        # entity is the account whose sign-in was cut off.
        await audit.record(
            session,
            actor,
            action="auth.refresh_reuse",
            entity_type="user",
            entity_id=reuse.subject_id,
            summary="a used refresh token was presented again; every token of its sign-in "
            f"(family {reuse.family_id}) is revoked",
            surface=SURFACE,
            module=MODULE,
        )
        raise
    user = await find_by_id(session, issued.subject_id)
    if user is None or not user.can_sign_in:
        await refresh_tokens.revoke_family(session, issued.family_id)
        raise RefreshRefused(INVALID_REFRESH)
    await audit.record(
        session,
        Actor(id=user.id, email=user.email, request_id=actor.request_id, ip=actor.ip),
        action="auth.refresh",
        entity_type="user",
        entity_id=user.id,
        summary="refreshed the admin API tokens",
        surface=SURFACE,
        module=MODULE,
    )
    return await _tokens(session, id_tokens, user, issued.token)


async def _tokens(
    session: AsyncSession, id_tokens: IdTokenService, user: User, refresh_token: str
) -> TokenRead:
    id_token = await id_tokens.issue(session, user_id=user.id, email=user.email)
    return TokenRead(
        id_token=id_token.token, refresh_token=refresh_token, expires_in=id_token.expires_in
    )
