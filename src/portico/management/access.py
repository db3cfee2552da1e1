"""Who is calling, and what may they do in this organisation.

Every org-scoped endpoint declares its permission with ``Depends(require("api.create"))``.
The dependency authenticates the bearer token, finds the caller's membership in the org of
the path (none → 404, so other tenants' ids reveal nothing), computes the effective
permissions (direct roles ∪ roles of the caller's groups) and refuses with a 403 naming the
missing permission.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import User
from portico.core.audit import Actor
from portico.core.db.session import SessionDep
from portico.core.errors import Forbidden, NotFound, PermissionDenied, Unauthorized
from portico.core.tokens import AccessTokenService
from portico.management.group.models import Group, group_members, group_roles
from portico.management.org.models import Membership, Organization, membership_roles
from portico.management.role.models import Role
from portico.management.role.permissions import PERMISSIONS


class OrgNotFound(NotFound):
    default_detail = "organisation not found"


@dataclass(frozen=True)
class Caller:
    """An authenticated user."""

    user: User
    request_id: str | None
    ip: str | None

    @property
    def actor(self) -> Actor:
        return Actor(id=self.user.id, email=self.user.email, request_id=self.request_id, ip=self.ip)


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


async def authenticate(request: Request, session: SessionDep) -> Caller:
    tokens: AccessTokenService = request.app.state.access_tokens
    claims = tokens.verify(bearer_token(request))
    try:
        user_id = uuid.UUID(str(claims["sub"]))
    except ValueError:
        raise Unauthorized("invalid token") from None
    user = await session.get(User, user_id)
    if user is None or not user.can_sign_in:
        raise Unauthorized("invalid token")
    state = request.state
    return Caller(
        user=user,
        request_id=getattr(state, "request_id", None),
        ip=getattr(state, "client_ip", None),
    )


CallerDep = Annotated[Caller, Depends(authenticate)]


async def effective_permissions(session: AsyncSession, membership_id: uuid.UUID) -> frozenset[str]:
    direct = (
        select(Role.permissions)
        .join(membership_roles, membership_roles.c.role_id == Role.id)
        .where(membership_roles.c.membership_id == membership_id)
    )
    via_groups = (
        select(Role.permissions)
        .join(group_roles, group_roles.c.role_id == Role.id)
        .join(Group, Group.id == group_roles.c.group_id)
        .join(group_members, group_members.c.group_id == Group.id)
        .where(group_members.c.membership_id == membership_id)
    )
    granted: set[str] = set()
    for permissions in await session.scalars(direct.union_all(via_groups)):
        granted.update(permissions or [])
    return frozenset(granted)


async def org_caller(caller: Caller, session: AsyncSession, org_id: uuid.UUID) -> OrgCaller:
    # only the id: loading the membership would also load its account and roles
    membership_id = await session.scalar(
        select(Membership.id).where(
            Membership.org_id == org_id,
            Membership.user_id == caller.user.id,
            Membership.accepted_at.is_not(None),
        )
    )
    if membership_id is None:
        # Platform administrators may act in any organisation with every permission.
        org = await session.get(Organization, org_id) if caller.user.is_platform_admin else None
        if org is not None:
            return OrgCaller(
                **_base(caller),
                org_id=org_id,
                membership_id=None,
                permissions=frozenset(PERMISSIONS),
            )
        raise OrgNotFound()
    permissions = await effective_permissions(session, membership_id)
    if caller.user.is_platform_admin:
        permissions = frozenset(PERMISSIONS)
    return OrgCaller(
        **_base(caller), org_id=org_id, membership_id=membership_id, permissions=permissions
    )


def _base(caller: Caller) -> dict[str, Any]:
    return {"user": caller.user, "request_id": caller.request_id, "ip": caller.ip}


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
    return dependency


async def member_of_org(orgId: str, caller: CallerDep, session: SessionDep) -> OrgCaller:
    """Dependency: the caller as a member of the path's org, whatever their permissions."""
    return await org_caller(caller, session, parse_id(orgId, OrgNotFound))
