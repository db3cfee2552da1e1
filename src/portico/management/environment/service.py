"""Environments: create, read, change, delete; every change audited."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import Conflict, NotFound
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller
from portico.management.environment import ports
from portico.management.environment.models import Environment, GatewayHost
from portico.management.environment.repository import EnvironmentRepository
from portico.management.environment.schemas import (
    DeployedApiRead,
    EnvironmentCreate,
    EnvironmentRead,
    EnvironmentUpdate,
)


class EnvironmentNotFound(NotFound):
    default_detail = "environment not found"


def snapshot(env: Environment) -> dict[str, Any]:
    return EnvironmentRead.model_validate(env).model_dump(mode="json")


async def get(*, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID) -> Environment:
    env = await EnvironmentRepository(session).get_in_org(caller.org_id, env_id)
    if env is None:
        raise EnvironmentNotFound()
    return env


async def list_(*, session: AsyncSession, caller: OrgCaller, query: ListQuery) -> Page[Environment]:
    repository = EnvironmentRepository(session)
    return await repository.page_in_org(caller.org_id, query)


async def create(
    *, session: AsyncSession, caller: OrgCaller, data: EnvironmentCreate
) -> Environment:
    repository = EnvironmentRepository(session)
    await _check_unique(repository, caller.org_id, data.name, data.gateway_hosts, None)
    env = Environment(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        name=data.name,
        description=data.description,
        hosts=_hosts(data.gateway_hosts),
    )
    await repository.add(env)
    # a gateway pointed at a new environment gets a (still empty) configuration at once
    await ports.publish(session, env, "environment created")
    await caller.audit(session, "environment.create", env.id, after=snapshot(env))
    return env


async def update(
    *, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID, data: EnvironmentUpdate
) -> Environment:
    repository = EnvironmentRepository(session)
    env = await get(session=session, caller=caller, env_id=env_id)
    before = snapshot(env)
    await _check_unique(repository, caller.org_id, data.name, data.gateway_hosts, env.id)
    if data.name is not None:
        env.name = data.name
    if data.description is not None:
        env.description = data.description
    hosts_changed = data.gateway_hosts is not None and data.gateway_hosts != env.gateway_hosts
    if hosts_changed:
        env.hosts.clear()
        await session.flush()  # free the host keys before re-inserting any of them
        env.hosts.extend(_hosts(data.gateway_hosts or []))
    await session.flush()
    await session.refresh(env)
    if hosts_changed or data.name is not None:  # both are part of the gateway's config
        await ports.publish(session, env, "environment changed")
    await caller.audit(session, "environment.update", env.id, before=before, after=snapshot(env))
    return env


async def delete(*, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID) -> None:
    env = await get(session=session, caller=caller, env_id=env_id)
    repository = EnvironmentRepository(session)
    if await repository.has_deployments(env.id):
        raise Conflict(f"environment '{env.name}' has deployed APIs; undeploy them first")
    if await ports.has_upstreams(session, env.id):
        raise Conflict(f"environment '{env.name}' still has upstreams; delete them first")
    before = snapshot(env)
    await repository.delete(env)
    await caller.audit(session, "environment.delete", env_id, before=before)


async def _check_unique(
    repository: EnvironmentRepository,
    org_id: uuid.UUID,
    name: str | None,
    hosts: list[str] | None,
    env_id: uuid.UUID | None,
) -> None:
    """A name or a gateway host already taken is a 409 naming its field (``/name``,
    ``/gatewayHosts/<i>`` for each taken host), so that a form shows it where it was typed."""
    if name is not None and await repository.name_taken(org_id, name, except_id=env_id):
        detail = f"an environment named '{name}' already exists"
        raise Conflict(detail, errors=[{"pointer": "/name", "detail": detail}])
    taken = await repository.hosts_taken(hosts or [], except_env=env_id)
    if taken:
        detail = f"gateway host already serves another environment: {', '.join(taken)}"
        errors = [
            {
                "pointer": f"/gatewayHosts/{i}",
                "detail": f"{host} already serves another environment",
            }
            for i, host in enumerate(hosts or [])
            if host in taken
        ]
        raise Conflict(detail, errors=errors)


def _hosts(hosts: list[str]) -> list[GatewayHost]:
    return [GatewayHost(host=h, position=i) for i, h in enumerate(hosts)]


async def deployed(*, session: AsyncSession, env: Environment) -> tuple[list[DeployedApiRead], int]:
    items = [DeployedApiRead(**row._asdict()) for row in await ports.deployed_apis(session, env.id)]
    return items, await EnvironmentRepository(session).latest_version(env.id)
