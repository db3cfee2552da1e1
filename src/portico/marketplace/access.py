"""Who is calling the marketplace admin API, and what may they do.

Every endpoint declares its permission with ``Depends(require("administer users"))``. The
dependency verifies the ID token (``Authorization: Bearer``), loads the account (it must be
active), resolves its site roles to permissions (only those of installed modules exist) and
refuses with a 403 naming the permission when the baseline ``access marketplace admin api``
or the endpoint's own is missing. Token problems are 401 (missing, malformed, expired, an
account that can no longer sign in). Then, the caller known and allowed, the query string is
checked (``core/query.py``): unknown parameters are 400, after the 401 and the 403.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import User, find_by_id
from portico.core.audit import Actor
from portico.core.db.engine import Database
from portico.core.db.session import SessionDep
from portico.core.errors import NotFound, PermissionDenied, Unauthorized
from portico.core.query import checkpoint, refuse_unknown
from portico.marketplace import SURFACE
from portico.marketplace.auth import bypass
from portico.marketplace.auth.keys import IdTokenService
from portico.marketplace.permissions import (
    BASELINE,
    SiteRole,
    effective_roles,
    permission_union,
)
from portico.marketplace.user.repository import UserRepository


@dataclass(frozen=True)
class SiteCaller:
    user: User
    roles: list[SiteRole]
    permissions: frozenset[str]
    request_id: str | None
    ip: str | None
    #: how the caller authenticated: "token", or "session" (the audited session bypass)
    via: str = field(default="token")

    @property
    def actor(self) -> Actor:
        return Actor(id=self.user.id, email=self.user.email, request_id=self.request_id, ip=self.ip)

    async def audit(
        self,
        session: AsyncSession,
        operation: str,
        *,
        entity_type: str,
        entity_id: uuid.UUID | str | None,
        module: str,
        summary: str,
        before: Any = None,
        after: Any = None,
        bundle: str | None = None,
    ) -> None:
        """Record a change of surface B made by this caller (``operation`` e.g.
        ``user.approve``), in the caller's transaction."""
        await audit.record(
            session,
            self.actor,
            action=operation,
            entity_type=entity_type,
            entity_id=entity_id,
            before=before,
            after=after,
            summary=summary,
            surface=SURFACE,
            bundle=bundle,
            module=module,
        )


def bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("malformed Authorization header; use 'Bearer <id token>'")
    return token.strip()


async def site_roles(session: AsyncSession, user: User) -> list[SiteRole]:
    assigned = await UserRepository(session).roles_of(user.id)
    return effective_roles(assigned, is_platform_admin=user.is_platform_admin)


async def caller_for(
    request: Request,
    session: AsyncSession,
    user: User,
    *,
    via: str = "token",
    assigned: list[str] | None = None,
) -> SiteCaller:
    """The caller ``user`` is; ``assigned``: its site roles when already read with it."""
    if assigned is None:
        roles = await site_roles(session, user)
    else:
        roles = effective_roles(assigned, is_platform_admin=user.is_platform_admin)
    available: dict[str, Any] = request.app.state.permissions
    return SiteCaller(
        user=user,
        roles=roles,
        permissions=permission_union(roles, available),
        request_id=getattr(request.state, "request_id", None),
        ip=getattr(request.state, "client_ip", None),
        via=via,
    )


async def authenticate(request: Request, session: SessionDep) -> SiteCaller:
    token = bearer(request)
    if token is None:
        # The default-off session bypass (auth/bypass.py): listed users' portal session
        # cookie stands in for a token.
        user_id = await _session_bypass(request)
        user = await find_by_id(session, user_id)
        if user is None or not user.can_sign_in:  # changed since, in another transaction
            raise Unauthorized(bypass.NOT_ACCEPTED)
        return await caller_for(request, session, user, via="session")
    tokens: IdTokenService = request.app.state.id_tokens
    claims = await tokens.verify(session, token)
    try:
        user_id = uuid.UUID(str(claims["sub"]))
    except ValueError:
        raise Unauthorized("invalid token") from None
    found = await UserRepository(session).with_roles(user_id)
    if found is None or not found[0].can_sign_in:
        raise Unauthorized("invalid token")
    user, assigned = found
    return await caller_for(request, session, user, assigned=assigned)


async def _session_bypass(request: Request) -> uuid.UUID:
    """The account a listed user's portal session authenticates, its use recorded in a
    short transaction of its own, committed at once: the request's transaction rolls back
    when the request fails (a 404, a 409...), and every use must stay in the audit log
    whatever the outcome.

    It runs before the request's own session has done anything: on SQLite a transaction
    takes the write lock when it begins, and this one must have committed by then."""
    database: Database = request.app.state.database
    async with database.session() as own, own.begin():
        user = await bypass.session_user(request, own)
        if user is None:
            raise Unauthorized("authentication required")
        actor = Actor(
            id=user.id,
            email=user.email,
            request_id=getattr(request.state, "request_id", None),
            ip=getattr(request.state, "client_ip", None),
        )
        await bypass.record_use(own, actor, request, surface=SURFACE)
    return user.id


SiteCallerDep = Annotated[SiteCaller, Depends(authenticate)]


def require(permission: str | None = None) -> Callable[..., Coroutine[Any, Any, SiteCaller]]:
    """The baseline permission, plus ``permission`` when given; then the query string."""

    async def dependency(request: Request, caller: SiteCallerDep) -> SiteCaller:
        for needed in (BASELINE, permission):
            if needed is not None and needed not in caller.permissions:
                raise PermissionDenied(needed)
        refuse_unknown(request)
        return caller

    dependency.__name__ = f"require_{(permission or 'baseline').replace(' ', '_')}"
    return checkpoint(dependency)


def parse_uuid(raw: str, not_found: type[NotFound]) -> uuid.UUID:
    """A path id: anything that is not a UUID names nothing (404, never a 500)."""
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise not_found() from None
