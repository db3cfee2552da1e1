"""Who is calling, and what may they do in this organisation.

Every org-scoped endpoint declares its permission with ``Depends(require("api.create"))``.
The dependency authenticates the bearer token, finds the caller's membership in the org of
the path (none → 404, so other tenants' ids reveal nothing), computes the effective
permissions (direct roles ∪ roles of the caller's groups) and refuses with a 403 naming the
missing permission.

A bearer token is a user's access token (a JWT) or a service account's token (opaque,
``psa_``-prefixed, found by its SHA-256): a service account acts in its own organisation only,
with the permissions of its roles, on every org-scoped endpoint exactly as a user would.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import User, find_by_id
from portico.core.audit import Actor
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.db.session import SessionDep
from portico.core.errors import Forbidden, NotFound, PermissionDenied, TokenExpired, Unauthorized
from portico.core.openapi import raises
from portico.core.tokens import AccessTokenService, hash_opaque_token, same_digest
from portico.management.group.repository import GroupRepository
from portico.management.org.repository import OrganizationRepository
from portico.management.role.permissions import PERMISSIONS
from portico.management.service_account.repository import ServiceAccountRepository

#: tells a service account's token from a user's JWT at a glance (and in secret scanners)
SERVICE_ACCOUNT_TOKEN_PREFIX = "psa_"  # noqa: S105
#: ``last_used_at`` is written at most this often per account (a polling connector would
#: otherwise make a write of every read)
LAST_USED_PRECISION = timedelta(minutes=1)
PEOPLE_ONLY = "a service account acts only in its organisation (/api/orgs/{orgId}/...)"


class OrgNotFound(NotFound):
    default_detail = "organisation not found"


@dataclass(frozen=True)
class ServiceAccountPrincipal:
    """The service account a token authenticated (detached from the store)."""

    id: uuid.UUID
    org_id: uuid.UUID
    name: str


@dataclass(frozen=True)
class Caller:
    """An authenticated user, or a service account (then ``user`` is None)."""

    user: User | None
    request_id: str | None
    ip: str | None
    service_account: ServiceAccountPrincipal | None = field(default=None, kw_only=True)

    @property
    def user_id(self) -> uuid.UUID | None:
        """The user calling, for the ``*_by`` columns (None for a service account)."""
        return self.user.id if self.user is not None else None

    def person(self) -> User:
        """The user calling; what only people do (their profile, their organisations) is a
        403 for a service account."""
        if self.user is None:
            raise Forbidden(PEOPLE_ONLY)
        return self.user

    @property
    def actor(self) -> Actor:
        account = self.service_account
        if account is not None:
            return Actor(
                id=account.id,
                email=None,
                kind="service_account",
                request_id=self.request_id,
                ip=self.ip,
            )
        user = self.person()
        return Actor(id=user.id, email=user.email, request_id=self.request_id, ip=self.ip)


@dataclass(frozen=True)
class OrgCaller(Caller):
    """An authenticated user acting in one organisation, with their permissions there."""

    org_id: uuid.UUID
    membership_id: uuid.UUID | None
    permissions: frozenset[str]

    async def audit(
        self,
        session: AsyncSession,
        action: str,
        entity_id: uuid.UUID,
        *,
        before: Any = None,
        after: Any = None,
        summary: str = "",
    ) -> None:
        """Record a change made by this caller in this org; ``action`` is
        ``<entity type>.<verb>``, so the entity type is its first part."""
        await audit.record(
            session,
            self.actor,
            action=action,
            entity_type=action.partition(".")[0],
            entity_id=entity_id,
            org_id=self.org_id,
            before=before,
            after=after,
            summary=summary,
        )


def parse_id(raw: str, not_found: type[NotFound]) -> uuid.UUID:
    """Path ids that are not UUIDs name nothing: 404, like an id that does not exist."""
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise not_found() from None


def bearer_token(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("authentication required")
    return token.strip()


@raises(Unauthorized)
async def authenticate(request: Request, session: SessionDep) -> Caller:
    token = bearer_token(request)
    if token.startswith(SERVICE_ACCOUNT_TOKEN_PREFIX):
        state = request.state
        return Caller(
            user=None,
            request_id=getattr(state, "request_id", None),
            ip=getattr(state, "client_ip", None),
            service_account=await _service_account(request, token),
        )
    tokens: AccessTokenService = request.app.state.access_tokens
    claims = tokens.verify(token)
    try:
        user_id = uuid.UUID(str(claims["sub"]))
    except ValueError:
        raise Unauthorized("invalid token") from None
    user = await find_by_id(session, user_id)
    if user is None or not user.can_sign_in:
        raise Unauthorized("invalid token")
    state = request.state
    return Caller(
        user=user,
        request_id=getattr(state, "request_id", None),
        ip=getattr(state, "client_ip", None),
    )


async def _service_account(request: Request, token: str) -> ServiceAccountPrincipal:
    """The service account holding ``token`` (found by its SHA-256, compared in constant
    time), unless expired (by the injectable clock) or deleted: 401.

    Its use is recorded (``last_used_at``) in a short transaction of its own, committed at
    once, whatever becomes of the request (a 403 is a use too: it is when one looks). It runs
    before the request's own session has done anything: on SQLite a transaction takes the
    write lock when it begins, and this one must have committed by then."""
    database: Database = request.app.state.database
    clock: Clock = request.app.state.clock
    digest = hash_opaque_token(token)
    async with database.session() as own, own.begin():
        repository = ServiceAccountRepository(own)
        row = await repository.by_token_hash(digest)
        if row is None or not same_digest(row.token_hash, digest):
            raise Unauthorized("invalid token")
        now = clock.now()
        if row.expires_at is not None and row.expires_at <= now:
            raise TokenExpired()
        if row.last_used_at is None or now - row.last_used_at >= LAST_USED_PRECISION:
            await repository.mark_used(row.id, now)
        return ServiceAccountPrincipal(id=row.id, org_id=row.org_id, name=row.name)


CallerDep = Annotated[Caller, Depends(authenticate)]


async def effective_permissions(session: AsyncSession, membership_id: uuid.UUID) -> frozenset[str]:
    """Direct roles ∪ roles of the membership's groups."""
    return await GroupRepository(session).permissions_of_membership(membership_id)


async def org_caller(caller: Caller, session: AsyncSession, org_id: uuid.UUID) -> OrgCaller:
    if caller.service_account is not None:
        return await _service_account_caller(caller, caller.service_account, session, org_id)
    user = caller.person()
    orgs = OrganizationRepository(session)
    membership_id = await orgs.accepted_membership_id(org_id, user.id)
    if membership_id is None:
        # Platform administrators may act in any organisation with every permission.
        org = await orgs.get(org_id) if user.is_platform_admin else None
        if org is not None:
            return OrgCaller(
                **_base(caller),
                org_id=org_id,
                membership_id=None,
                permissions=frozenset(PERMISSIONS),
            )
        raise OrgNotFound()
    permissions = await effective_permissions(session, membership_id)
    if user.is_platform_admin:
        permissions = frozenset(PERMISSIONS)
    return OrgCaller(
        **_base(caller), org_id=org_id, membership_id=membership_id, permissions=permissions
    )


async def _service_account_caller(
    caller: Caller, account: ServiceAccountPrincipal, session: AsyncSession, org_id: uuid.UUID
) -> OrgCaller:
    """A service account in its own organisation (another's → 404, as for a non-member),
    with the union of its roles' permissions."""
    if account.org_id != org_id:
        raise OrgNotFound()
    repository = ServiceAccountRepository(session)
    if not await repository.exists(account.id):  # deleted since the token was checked
        raise Unauthorized("invalid token")
    return OrgCaller(
        **_base(caller),
        org_id=org_id,
        membership_id=None,
        permissions=await repository.permissions(account.id),
    )


def _base(caller: Caller) -> dict[str, Any]:
    return {
        "user": caller.user,
        "request_id": caller.request_id,
        "ip": caller.ip,
        "service_account": caller.service_account,
    }


def ensure_grantable(caller: OrgCaller, permissions: Iterable[str]) -> None:
    """A caller grants only permissions they hold themselves — through a role's definition,
    a role given to a member or a group, or a member added to a group. Otherwise
    ``role.manage`` or ``user.manage`` alone would be a way to become Administrator."""
    missing = sorted(set(permissions) - caller.permissions)
    if missing:
        raise Forbidden(f"cannot grant permissions you do not hold: {', '.join(missing)}")


def require(permission: str) -> Callable[..., Coroutine[Any, Any, OrgCaller]]:
    """Dependency: the caller, in the path's ``orgId``, holding ``permission``."""
    if permission not in PERMISSIONS:
        raise ValueError(f"unknown permission {permission!r}")

    async def dependency(orgId: str, caller: CallerDep, session: SessionDep) -> OrgCaller:
        scoped = await org_caller(caller, session, parse_id(orgId, OrgNotFound))
        if permission not in scoped.permissions:
            raise PermissionDenied(permission)
        return scoped

    dependency.__name__ = f"require_{permission.replace('.', '_').replace('-', '_')}"
    # documented on every route that requires it (core/openapi.py); 401 comes with CallerDep
    return raises(PermissionDenied, OrgNotFound)(dependency)


@raises(OrgNotFound)
async def member_of_org(orgId: str, caller: CallerDep, session: SessionDep) -> OrgCaller:
    """Dependency: the caller as a member of the path's org, whatever their permissions."""
    return await org_caller(caller, session, parse_id(orgId, OrgNotFound))
