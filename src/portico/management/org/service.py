"""Organisations: created with their predefined roles; the creator becomes Administrator."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import User
from portico.core.audit import Actor
from portico.core.clock import utcnow
from portico.core.errors import Conflict, NotFound
from portico.core.pagination import ListQuery, Page
from portico.management.org.models import Membership, Organization
from portico.management.org.repository import OrganizationRepository
from portico.management.org.schemas import OrganizationCreate, OrganizationRead, OrganizationUpdate
from portico.management.role.models import Role
from portico.management.role.permissions import ADMINISTRATOR_ROLE, PREDEFINED_ROLES


def snapshot(org: Organization) -> dict[str, Any]:
    return OrganizationRead.model_validate(org).model_dump(mode="json")


async def create(
    *, session: AsyncSession, actor: Actor, data: OrganizationCreate, owner: User | None
) -> Organization:
    repository = OrganizationRepository(session)
    if await repository.by_name(data.name):
        raise Conflict(f"an organisation named '{data.name}' already exists")
    org = await repository.add(
        Organization(id=uuid.uuid4(), name=data.name, description=data.description)
    )
    roles = {
        name: Role(
            id=uuid.uuid4(),
            org_id=org.id,
            name=name,
            description=description,
            permissions=sorted(permissions),
            predefined=True,
        )
        for name, (description, permissions) in PREDEFINED_ROLES.items()
    }
    session.add_all(roles.values())
    if owner is not None:
        session.add(
            Membership(
                id=uuid.uuid4(),
                org_id=org.id,
                user_id=owner.id,
                roles=[roles[ADMINISTRATOR_ROLE]],
                accepted_at=utcnow(),
            )
        )
    await session.flush()
    await audit.record(
        session,
        actor,
        action="org.create",
        entity_type="org",
        entity_id=org.id,
        org_id=org.id,
        after=snapshot(org),
    )
    return org


async def get(*, session: AsyncSession, org_id: uuid.UUID) -> Organization:
    org = await OrganizationRepository(session).get(org_id)
    if org is None:
        raise NotFound("organisation not found")
    return org


async def list_visible(
    *, session: AsyncSession, user: User, query: ListQuery
) -> Page[Organization]:
    repository = OrganizationRepository(session)
    return await repository.page(
        repository.visible_to(user.id, everything=user.is_platform_admin), query
    )


async def update(
    *, session: AsyncSession, actor: Actor, org: Organization, data: OrganizationUpdate
) -> Organization:
    before = snapshot(org)
    if data.name is not None and data.name != org.name:
        if await OrganizationRepository(session).by_name(data.name):
            raise Conflict(f"an organisation named '{data.name}' already exists")
        org.name = data.name
    if data.description is not None:
        org.description = data.description
    await session.flush()
    await session.refresh(org)
    await audit.record(
        session,
        actor,
        action="org.update",
        entity_type="org",
        entity_id=org.id,
        org_id=org.id,
        before=before,
        after=snapshot(org),
    )
    return org
