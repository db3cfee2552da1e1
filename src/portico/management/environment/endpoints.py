from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.environment import service as environment_service
from portico.management.environment.schemas import (
    EnvironmentCreate,
    EnvironmentDetail,
    EnvironmentRead,
    EnvironmentUpdate,
)
from portico.management.environment.service import EnvironmentNotFound
from portico.management.pages import PageRead, page_of

TAKEN = "An environment with this name, or serving one of these gateway hosts, exists."
router = APIRouter(prefix="/api/orgs/{orgId}/envs", tags=["environments"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt", "updatedAt"}),
    default_sort="name",
    filterable=frozenset({"name"}),
)
Reader = Annotated[OrgCaller, Depends(require("environment.read"))]
Manager = Annotated[OrgCaller, Depends(require("environment.manage"))]


@router.get("", response_model=PageRead[EnvironmentRead])
async def list_environments(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[EnvironmentRead]:
    page = await environment_service.list_(session=session, caller=caller, query=query)
    return page_of(page, EnvironmentRead)


@router.post(
    "",
    response_model=EnvironmentRead,
    status_code=201,
    responses=problems(
        Conflict,
        detail=TAKEN,
    ),
)
async def create_environment(
    body: EnvironmentCreate, caller: Manager, session: SessionDep
) -> EnvironmentRead:
    env = await environment_service.create(session=session, caller=caller, data=body)
    return EnvironmentRead.model_validate(env)


@router.get("/{envId}", response_model=EnvironmentDetail)
async def get_environment(envId: str, caller: Reader, session: SessionDep) -> EnvironmentDetail:
    """One environment, with the APIs deployed there and its current config version."""
    env = await environment_service.get(
        session=session, caller=caller, env_id=parse_id(envId, EnvironmentNotFound)
    )
    deployed, version = await environment_service.deployed(session=session, env=env)
    return EnvironmentDetail(
        **EnvironmentRead.model_validate(env).model_dump(),
        config_version=version,
        deployments=deployed,
    )


@router.patch(
    "/{envId}",
    response_model=EnvironmentRead,
    responses=problems(
        Conflict,
        detail=TAKEN,
    ),
)
async def update_environment(
    envId: str,
    body: EnvironmentUpdate,
    caller: Manager,
    session: SessionDep,
) -> EnvironmentRead:
    env = await environment_service.update(
        session=session, caller=caller, env_id=parse_id(envId, EnvironmentNotFound), data=body
    )
    return EnvironmentRead.model_validate(env)


@router.delete(
    "/{envId}",
    status_code=204,
    responses=problems(
        Conflict, detail="The environment has deployed APIs or upstreams: remove them first."
    ),
)
async def delete_environment(envId: str, caller: Manager, session: SessionDep) -> Response:
    await environment_service.delete(
        session=session, caller=caller, env_id=parse_id(envId, EnvironmentNotFound)
    )
    return Response(status_code=204)
