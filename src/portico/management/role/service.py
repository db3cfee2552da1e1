"""Roles: named permission sets of an organisation. Predefined roles are read-only."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import Conflict, NotFound
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller, ensure_grantable
from portico.management.role.models import Role
from portico.management.role.permissions import PERMISSIONS
from portico.management.role.repository import RoleRepository
from portico.management.role.schemas import (
    PermissionCatalogueRead,
    PermissionRead,
    RoleCreate,
    RoleRead,
    RoleUpdate,
)

PREDEFINED_IMMUTABLE = "predefined roles cannot be changed"


class RoleNotFound(NotFound):
    default_detail = "role not found"


def snapshot(role: Role) -> dict[str, Any]:
    return RoleRead.model_validate(role).model_dump(mode="json")


def catalogue() -> PermissionCatalogueRead:
    """Every permission, in catalogue order (grouped by domain, as the role editor shows it)."""
    return PermissionCatalogueRead(
        items=[PermissionRead(key=key, label=label) for key, label in PERMISSIONS.items()]
    )


async def get(*, session: AsyncSession, caller: OrgCaller, role_id: uuid.UUID) -> Role:
    role = await RoleRepository(session).get_in_org(caller.org_id, role_id)
    if role is None:
        raise RoleNotFound()
    return role


async def list_(*, session: AsyncSession, caller: OrgCaller, query: ListQuery) -> Page[Role]:
    repository = RoleRepository(session)
    return await repository.page_in_org(caller.org_id, query)


async def create(*, session: AsyncSession, caller: OrgCaller, data: RoleCreate) -> Role:
    repository = RoleRepository(session)
    await _check_name(repository, caller.org_id, data.name, None)
    ensure_grantable(caller, data.permissions)
    role = await repository.add(
        Role(
            id=uuid.uuid4(),
            org_id=caller.org_id,
            name=data.name,
            description=data.description,
            permissions=sorted(data.permissions),
            predefined=False,
        )
    )
    await caller.audit(session, "role.create", role.id, after=snapshot(role))
    return role


async def update(
    *, session: AsyncSession, caller: OrgCaller, role_id: uuid.UUID, data: RoleUpdate
) -> Role:
    repository = RoleRepository(session)
    role = await _get_custom(session=session, caller=caller, role_id=role_id)
    before = snapshot(role)
    await _check_name(repository, caller.org_id, data.name, role.id)
    if data.name is not None:
        role.name = data.name
    if data.description is not None:
        role.description = data.description
    if data.permissions is not None:
        # only what is added is a grant: editing a role that holds more than the caller is fine
        ensure_grantable(caller, set(data.permissions) - set(role.permissions or []))
        # a new list (never an in-place edit) so that the JSON column is seen as changed
        role.permissions = sorted(data.permissions)
    await session.flush()
    await session.refresh(role)
    await caller.audit(session, "role.update", role.id, before=before, after=snapshot(role))
    return role


async def delete(*, session: AsyncSession, caller: OrgCaller, role_id: uuid.UUID) -> None:
    """Deleting a role takes it away from every member and group holding it (the foreign
    keys cascade); the audit entry says how many lost it, since that is not visible later."""
    repository = RoleRepository(session)
    role = await _get_custom(session=session, caller=caller, role_id=role_id)
    before = snapshot(role)
    members, groups = await repository.holders(role.id)
    await repository.delete(role)
    await caller.audit(
        session,
        "role.delete",
        role_id,
        before=before,
        summary=f"role '{before['name']}' removed from {members} member(s) and {groups} group(s)",
    )


async def _get_custom(*, session: AsyncSession, caller: OrgCaller, role_id: uuid.UUID) -> Role:
    role = await get(session=session, caller=caller, role_id=role_id)
    if role.predefined:
        raise Conflict(PREDEFINED_IMMUTABLE)
    return role


async def _check_name(
    repository: RoleRepository, org_id: uuid.UUID, name: str | None, role_id: uuid.UUID | None
) -> None:
    if name is not None and await repository.name_taken(org_id, name, except_id=role_id):
        raise Conflict(f"a role named '{name}' already exists")
