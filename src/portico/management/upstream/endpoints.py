from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.environment.service import EnvironmentNotFound
from portico.management.pages import PageRead, page_of
from portico.management.upstream import service as upstream_service
from portico.management.upstream.schemas import (
    UpstreamCreate,
    UpstreamRead,
    UpstreamReplace,
    UpstreamUpdate,
)
from portico.management.upstream.service import UpstreamNotFound

router = APIRouter(prefix="/api/orgs/{orgId}/envs/{envId}/upstreams", tags=["upstreams"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt", "updatedAt"}),
    default_sort="name",
    filterable=frozenset({"name"}),
)
Reader = Annotated[OrgCaller, Depends(require("upstream.read"))]
Manager = Annotated[OrgCaller, Depends(require("upstream.manage"))]


@router.get("", response_model=PageRead[UpstreamRead])
async def list_upstreams(
    envId: str,
    caller: Reader,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> PageRead[UpstreamRead]:
    page = await upstream_service.list_(
        session=session,
        caller=caller,
        env_id=parse_id(envId, EnvironmentNotFound),
        query=query,
    )
    return page_of(page, UpstreamRead)


@router.post(
    "",
    response_model=UpstreamRead,
    status_code=201,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def create_upstream(
    envId: str, body: UpstreamCreate, caller: Manager, session: SessionDep
) -> UpstreamRead:
    upstream = await upstream_service.create(
        session=session, caller=caller, env_id=parse_id(envId, EnvironmentNotFound), data=body
    )
    return UpstreamRead.model_validate(upstream)


@router.get("/{upstreamId}", response_model=UpstreamRead)
async def get_upstream(
    envId: str, upstreamId: str, caller: Reader, session: SessionDep
) -> UpstreamRead:
    upstream = await upstream_service.get(
        session=session,
        caller=caller,
        env_id=parse_id(envId, EnvironmentNotFound),
        upstream_id=parse_id(upstreamId, UpstreamNotFound),
    )
    return UpstreamRead.model_validate(upstream)


@router.put(
    "/{upstreamId}",
    response_model=UpstreamRead,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def replace_upstream(
    envId: str, upstreamId: str, body: UpstreamReplace, caller: Manager, session: SessionDep
) -> UpstreamRead:
    """Replace the upstream: name, description and specification are all required."""
    upstream = await upstream_service.update(
        session=session,
        caller=caller,
        env_id=parse_id(envId, EnvironmentNotFound),
        upstream_id=parse_id(upstreamId, UpstreamNotFound),
        data=body,
    )
    return UpstreamRead.model_validate(upstream)


@router.patch(
    "/{upstreamId}",
    response_model=UpstreamRead,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def update_upstream(
    envId: str, upstreamId: str, body: UpstreamUpdate, caller: Manager, session: SessionDep
) -> UpstreamRead:
    """Change some fields; a ``specification`` given replaces the stored one whole."""
    upstream = await upstream_service.update(
        session=session,
        caller=caller,
        env_id=parse_id(envId, EnvironmentNotFound),
        upstream_id=parse_id(upstreamId, UpstreamNotFound),
        data=body,
    )
    return UpstreamRead.model_validate(upstream)


@router.delete(
    "/{upstreamId}",
    status_code=204,
    responses=problems(Conflict, detail="APIs deployed in the environment use the upstream."),
)
async def delete_upstream(
    envId: str, upstreamId: str, caller: Manager, session: SessionDep
) -> Response:
    await upstream_service.delete(
        session=session,
        caller=caller,
        env_id=parse_id(envId, EnvironmentNotFound),
        upstream_id=parse_id(upstreamId, UpstreamNotFound),
    )
    return Response(status_code=204)
