"""Service accounts: machine identities of an organisation, each with one long-lived bearer
token shown once at creation (only its SHA-256 is kept, as for refresh tokens) and roles of
the org. The token authenticates like a user's (``access.authenticate``); deleting the
account revokes it. Managed with ``user.manage``: nobody grants a role they do not hold.

Every change made with a token is audited with the account as actor (kind
``service_account``); each use also sets ``last_used_at`` (see ``access``), rather than an
audit entry per request: a connector polls, and an entry per read would bury the changes the
log is for."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import Clock, utcnow
from portico.core.errors import Conflict, NotFound, ValidationFailed
from portico.core.pagination import ListQuery, Page
from portico.core.tokens import hash_opaque_token, new_opaque_token
from portico.management.access import SERVICE_ACCOUNT_TOKEN_PREFIX, OrgCaller, ensure_grantable
from portico.management.role.models import Role
from portico.management.role.repository import RoleRepository
from portico.management.service_account.models import ServiceAccount
from portico.management.service_account.repository import ServiceAccountRepository
from portico.management.service_account.schemas import (
    ServiceAccountCreate,
    ServiceAccountRead,
    ServiceAccountUpdate,
)

UNKNOWN_ROLE = "unknown role"
NOT_IN_THE_FUTURE = "must be in the future"


class ServiceAccountNotFound(NotFound):
    default_detail = "service account not found"


@dataclass(frozen=True)
class IssuedServiceAccount:
    account: ServiceAccount
    token: str  # shown once


def snapshot(account: ServiceAccount) -> dict[str, Any]:
    return ServiceAccountRead.model_validate(account).model_dump(mode="json")


async def get(*, session: AsyncSession, caller: OrgCaller, account_id: uuid.UUID) -> ServiceAccount:
    account = await ServiceAccountRepository(session).get_in_org(caller.org_id, account_id)
    if account is None:
        raise ServiceAccountNotFound()
    return account


async def list_(
    *, session: AsyncSession, caller: OrgCaller, query: ListQuery
) -> Page[ServiceAccount]:
    repository = ServiceAccountRepository(session)
    return await repository.page_in_org(caller.org_id, query)


async def create(
    *, session: AsyncSession, caller: OrgCaller, data: ServiceAccountCreate, clock: Clock
) -> IssuedServiceAccount:
    repository = ServiceAccountRepository(session)
    _check_expiry(data.expires_at, clock)
    await _check_name(repository, caller.org_id, data.name, None)
    roles = await _roles(session, caller.org_id, data.role_ids)
    ensure_grantable(caller, _permissions(roles))
    token = SERVICE_ACCOUNT_TOKEN_PREFIX + new_opaque_token()
    account = await repository.add(
        ServiceAccount(
            id=uuid.uuid4(),
            org_id=caller.org_id,
            name=data.name,
            token_hash=hash_opaque_token(token),
            expires_at=data.expires_at,
            created_by=caller.user_id,
            roles=roles,
        )
    )
    await caller.audit(session, "service_account.create", account.id, after=snapshot(account))
    return IssuedServiceAccount(account, token)


async def update(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    account_id: uuid.UUID,
    data: ServiceAccountUpdate,
    clock: Clock,
) -> ServiceAccount:
    repository = ServiceAccountRepository(session)
    account = await get(session=session, caller=caller, account_id=account_id)
    before = snapshot(account)
    expiry_sent = "expires_at" in data.model_fields_set
    if expiry_sent:
        _check_expiry(data.expires_at, clock)
    await _check_name(repository, caller.org_id, data.name, account.id)
    if data.role_ids is not None:
        roles = await _roles(session, caller.org_id, data.role_ids)
        ensure_grantable(caller, _permissions([r for r in roles if r not in account.roles]))
        account.roles = roles
        # link-table changes leave the account's row alone, so its onupdate would not fire
        account.updated_at = utcnow()
    if data.name is not None:
        account.name = data.name
    if expiry_sent:
        account.expires_at = data.expires_at
    await session.flush()
    await session.refresh(account)
    await caller.audit(
        session, "service_account.update", account.id, before=before, after=snapshot(account)
    )
    return account


async def delete(*, session: AsyncSession, caller: OrgCaller, account_id: uuid.UUID) -> None:
    """Deleting the account revokes its token at once."""
    account = await get(session=session, caller=caller, account_id=account_id)
    before = snapshot(account)
    await ServiceAccountRepository(session).delete(account)
    await caller.audit(session, "service_account.delete", account_id, before=before)


def _permissions(roles: list[Role]) -> set[str]:
    return {p for role in roles for p in role.permissions or []}


def _check_expiry(expires_at: Any, clock: Clock) -> None:
    if expires_at is not None and expires_at <= clock.now():
        raise ValidationFailed.at("/expiresAt", f"$.expiresAt: {NOT_IN_THE_FUTURE}")


async def _roles(session: AsyncSession, org_id: uuid.UUID, role_ids: list[uuid.UUID]) -> list[Role]:
    """Role ids → roles of this org; another org's role or an id naming nothing is a 400 at
    its index (all of them at once)."""
    found = {r.id: r for r in await RoleRepository(session).many_in_org(org_id, role_ids)}
    errors = [
        {"pointer": f"/roleIds/{index}", "detail": f"$.roleIds[{index}]: {UNKNOWN_ROLE}"}
        for index, value in enumerate(role_ids)
        if value not in found
    ]
    if errors:
        raise ValidationFailed(errors)
    return [found[i] for i in role_ids]


async def _check_name(
    repository: ServiceAccountRepository,
    org_id: uuid.UUID,
    name: str | None,
    account_id: uuid.UUID | None,
) -> None:
    if name is not None and await repository.name_taken(org_id, name, except_id=account_id):
        raise Conflict(f"a service account named '{name}' already exists")
