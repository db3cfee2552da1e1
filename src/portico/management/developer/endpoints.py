from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.developer import service as developer_service
from portico.management.developer.schemas import DeveloperCreate, DeveloperRead, DeveloperUpdate
from portico.management.developer.service import DeveloperNotFound
from portico.management.pages import PageRead, page_of

router = APIRouter(prefix="/api/orgs/{orgId}/developers", tags=["developers"])

LIST = ListSpec(
    sortable=frozenset({"email", "lastName", "createdAt"}),
    default_sort="email",
    filterable=frozenset({"email", "status"}),
)
Reader = Annotated[OrgCaller, Depends(require("developer.read"))]
Manager = Annotated[OrgCaller, Depends(require("developer.manage"))]


@router.get("", response_model=PageRead[DeveloperRead])
async def list_developers(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[DeveloperRead]:
    page = await developer_service.list_(session=session, caller=caller, query=query)
    return page_of(page, DeveloperRead)


@router.post(
    "",
    response_model=DeveloperRead,
    status_code=201,
    responses=problems(Conflict, detail="A developer with this email already exists."),
)
async def create_developer(
    body: DeveloperCreate, caller: Manager, session: SessionDep
) -> DeveloperRead:
    developer = await developer_service.create(session=session, caller=caller, data=body)
    return DeveloperRead.model_validate(developer)


@router.get("/{developerId}", response_model=DeveloperRead)
async def get_developer(developerId: str, caller: Reader, session: SessionDep) -> DeveloperRead:
    developer = await developer_service.get(
        session=session, caller=caller, developer_id=parse_id(developerId, DeveloperNotFound)
    )
    return DeveloperRead.model_validate(developer)


@router.patch(
    "/{developerId}",
    response_model=DeveloperRead,
    responses=problems(Conflict, detail="A developer with this email already exists."),
)
async def update_developer(
    developerId: str, body: DeveloperUpdate, caller: Manager, session: SessionDep
) -> DeveloperRead:
    developer = await developer_service.update(
        session=session,
        caller=caller,
        developer_id=parse_id(developerId, DeveloperNotFound),
        data=body,
    )
    return DeveloperRead.model_validate(developer)


@router.delete(
    "/{developerId}",
    status_code=204,
    responses=problems(
        Conflict, detail="The developer still has apps (and cascade was not asked for)."
    ),
)
async def delete_developer(
    developerId: str,
    caller: Manager,
    session: SessionDep,
    cascade: Annotated[
        bool,
        Query(
            description="Delete the developer's apps and the consumers they own too (needs "
            "force-delete); otherwise a developer with apps is a 409."
        ),
    ] = False,
) -> Response:
    await developer_service.delete(
        session=session,
        caller=caller,
        developer_id=parse_id(developerId, DeveloperNotFound),
        cascade=cascade,
    )
    return Response(status_code=204)
