from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.app import service as app_service
from portico.management.app.schemas import (
    AppCreate,
    AppRead,
    AppUpdate,
    AppWritten,
    CredentialRotate,
)
from portico.management.app.service import AppNotFound, AppView, DeveloperNotFound
from portico.management.consumer.endpoints import Box
from portico.management.environment.service import EnvironmentNotFound
from portico.management.pages import PageRead

router = APIRouter(prefix="/api/orgs/{orgId}", tags=["apps"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt", "updatedAt"}),
    default_sort="name",
    filterable=frozenset(),
)
Reader = Annotated[OrgCaller, Depends(require("developer.read"))]
Manager = Annotated[OrgCaller, Depends(require("developer.manage"))]


def _written(view: AppView) -> AppWritten:
    return AppWritten(**view.read().model_dump(), generated_credentials=view.generated)


@router.get("/developers/{developerId}/envs/{envId}/apps", response_model=PageRead[AppRead])
async def list_apps(
    developerId: str,
    envId: str,
    caller: Reader,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> PageRead[AppRead]:
    page = await app_service.list_(
        session=session,
        caller=caller,
        developer_id=parse_id(developerId, DeveloperNotFound),
        environment_id=parse_id(envId, EnvironmentNotFound),
        query=query,
    )
    return PageRead[AppRead](
        items=[view.read() for view in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )


@router.post(
    "/developers/{developerId}/envs/{envId}/apps",
    response_model=AppWritten,
    status_code=201,
    responses=problems(
        Conflict,
        detail="An app with this name, or a consumer holding these credentials, already exists.",
    ),
)
async def create_app(
    developerId: str, envId: str, body: AppCreate, caller: Manager, session: SessionDep, box: Box
) -> AppWritten:
    """Credentials generated for it are in this response only."""
    view = await app_service.create(
        session=session,
        caller=caller,
        developer_id=parse_id(developerId, DeveloperNotFound),
        environment_id=parse_id(envId, EnvironmentNotFound),
        data=body,
        box=box,
    )
    return _written(view)


@router.get("/apps/{appId}", response_model=AppRead)
async def get_app(appId: str, caller: Reader, session: SessionDep) -> AppRead:
    view = await app_service.get(
        session=session, caller=caller, app_id=parse_id(appId, AppNotFound)
    )
    return view.read()


@router.patch(
    "/apps/{appId}",
    response_model=AppWritten,
    responses=problems(
        Conflict,
        detail="An app with this name, or a consumer holding these credentials, already exists.",
    ),
)
async def update_app(
    appId: str, body: AppUpdate, caller: Manager, session: SessionDep, box: Box
) -> AppWritten:
    """``developerId`` reassigns, ``products`` replaces the ranks, ``status: revoked`` cuts
    access, ``plugins`` replaces the credentials (generated ones shown once)."""
    view = await app_service.update(
        session=session, caller=caller, app_id=parse_id(appId, AppNotFound), data=body, box=box
    )
    return _written(view)


@router.post(
    "/apps/{appId}/credentials/rotate",
    response_model=AppWritten,
    responses=problems(Conflict, detail="Another consumer already holds these credentials."),
)
async def rotate_app_credentials(
    appId: str, body: CredentialRotate, caller: Manager, session: SessionDep, box: Box
) -> AppWritten:
    """New credentials, shown once; the replaced key-auth key keeps working for
    ``graceSeconds``."""
    view = await app_service.rotate(
        session=session, caller=caller, app_id=parse_id(appId, AppNotFound), data=body, box=box
    )
    return _written(view)


@router.delete("/apps/{appId}", status_code=204)
async def delete_app(appId: str, caller: Manager, session: SessionDep) -> Response:
    await app_service.delete(session=session, caller=caller, app_id=parse_id(appId, AppNotFound))
    return Response(status_code=204)
