"""Upstreams of an environment: create, read, replace, change, delete; every change audited.

Every operation first resolves the environment of the path in the caller's organisation, so
an unknown environment is ``environment not found`` whatever the upstream id, and an upstream
of another environment (or organisation) is ``upstream not found``.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import Conflict, NotFound
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller
from portico.management.environment import service as environment_service
from portico.management.environment.models import Environment
from portico.management.environment.ports import publish
from portico.management.upstream import ports
from portico.management.upstream.models import Upstream
from portico.management.upstream.repository import UpstreamRepository
from portico.management.upstream.schemas import (
    UpstreamCreate,
    UpstreamRead,
    UpstreamReplace,
    UpstreamUpdate,
)


class UpstreamNotFound(NotFound):
    default_detail = "upstream not found"


def snapshot(upstream: Upstream) -> dict[str, Any]:
    return UpstreamRead.model_validate(upstream).model_dump(mode="json")


async def get(
    *, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID, upstream_id: uuid.UUID
) -> Upstream:
    _, upstream = await _find(session, caller, env_id, upstream_id)
    return upstream


async def list_(
    *, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID, query: ListQuery
) -> Page[Upstream]:
    env = await environment_service.get(session=session, caller=caller, env_id=env_id)
    repository = UpstreamRepository(session)
    statement = repository.in_environment(caller.org_id, env.id, name=query.filters.get("name"))
    return await repository.page(statement, query)


async def create(
    *, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID, data: UpstreamCreate
) -> Upstream:
    env = await environment_service.get(session=session, caller=caller, env_id=env_id)
    repository = UpstreamRepository(session)
    await _check_unique(repository, env, data.name, None)
    upstream = Upstream(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        environment_id=env.id,
        name=data.name,
        description=data.description,
        specification=data.specification.model_dump(mode="json"),
    )
    await repository.add(upstream)
    await session.refresh(upstream)  # the response shows what the store holds
    await caller.audit(session, "upstream.create", upstream.id, after=snapshot(upstream))
    return upstream


async def update(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    env_id: uuid.UUID,
    upstream_id: uuid.UUID,
    data: UpstreamUpdate | UpstreamReplace,
) -> Upstream:
    """PATCH (fields left out stay) and PUT (every field given). Either way a specification
    replaces the stored one whole, so what is stored was validated as one document."""
    env, upstream = await _find(session, caller, env_id, upstream_id)
    before = snapshot(upstream)
    await _check_unique(UpstreamRepository(session), env, data.name, upstream.id)
    if data.name is not None:
        upstream.name = data.name
    if data.description is not None:
        upstream.description = data.description
    if data.specification is not None:
        upstream.specification = data.specification.model_dump(mode="json")
    await session.flush()
    await session.refresh(upstream)
    if await _deployed_users(session, upstream):  # gateways must get the new nodes and checks
        await publish(session, env, f"upstream {upstream.name} changed")
    await caller.audit(
        session, "upstream.update", upstream.id, before=before, after=snapshot(upstream)
    )
    return upstream


async def delete(
    *, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID, upstream_id: uuid.UUID
) -> None:
    upstream = await get(session=session, caller=caller, env_id=env_id, upstream_id=upstream_id)
    users = await _deployed_users(session, upstream)
    if users:
        raise Conflict(
            f"upstream '{upstream.name}' is used by deployed revision {users[0]}; "
            "undeploy it or bind another upstream first"
        )
    before = snapshot(upstream)
    await UpstreamRepository(session).delete(upstream)
    await caller.audit(session, "upstream.delete", upstream_id, before=before)


async def _find(
    session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID, upstream_id: uuid.UUID
) -> tuple[Environment, Upstream]:
    env = await environment_service.get(session=session, caller=caller, env_id=env_id)
    upstream = await UpstreamRepository(session).get_in_environment(
        caller.org_id, env.id, upstream_id
    )
    if upstream is None:
        raise UpstreamNotFound()
    return env, upstream


async def _check_unique(
    repository: UpstreamRepository,
    env: Environment,
    name: str | None,
    upstream_id: uuid.UUID | None,
) -> None:
    if name is not None and await repository.name_taken(
        env.org_id, env.id, name, except_id=upstream_id
    ):
        raise Conflict(f"an upstream named '{name}' already exists in environment '{env.name}'")


async def _deployed_users(session: AsyncSession, upstream: Upstream) -> list[str]:
    """'<API> revision <n>' for every deployed revision whose routes target ``upstream``."""
    return await ports.deployed_users(session, upstream.id)
