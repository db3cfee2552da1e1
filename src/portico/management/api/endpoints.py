from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.api import service as api_service
from portico.management.api.schemas import ApiCreate, ApiRead, ApiUpdate
from portico.management.api.service import ApiNotFound
from portico.management.pages import PageRead

router = APIRouter(prefix="/api/orgs/{orgId}/apis", tags=["apis"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt", "updatedAt"}),
    default_sort="name",
    filterable=frozenset({"name", "search"}),
)
FILTERS = {
    "name": {"description": "Only the API of this exact name."},
    "search": {"description": "Only APIs whose name contains this text (letters in any case)."},
}
Reader = Annotated[OrgCaller, Depends(require("api.read"))]
Creator = Annotated[OrgCaller, Depends(require("api.create"))]
Editor = Annotated[OrgCaller, Depends(require("api.update"))]
Deleter = Annotated[OrgCaller, Depends(require("api.delete"))]


@router.get(
    "",
    response_model=PageRead[ApiRead],
    openapi_extra={"parameters": LIST.openapi_parameters(FILTERS)},
)
async def list_apis(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[ApiRead]:
    """APIs with their revision count and the revision live in each environment."""
    page = await api_service.list_(session=session, caller=caller, query=query)
    return PageRead[ApiRead](
        items=[ApiRead.of(*view) for view in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )


@router.post(
    "",
    response_model=ApiRead,
    status_code=201,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def create_api(body: ApiCreate, caller: Creator, session: SessionDep) -> ApiRead:
    view = await api_service.create(session=session, caller=caller, data=body)
    return ApiRead.of(*view)


@router.get("/{apiId}", response_model=ApiRead)
async def get_api(apiId: str, caller: Reader, session: SessionDep) -> ApiRead:
    view = await api_service.view(
        session=session, caller=caller, api_id=parse_id(apiId, ApiNotFound)
    )
    return ApiRead.of(*view)


@router.patch(
    "/{apiId}",
    response_model=ApiRead,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def update_api(apiId: str, body: ApiUpdate, caller: Editor, session: SessionDep) -> ApiRead:
    view = await api_service.update(
        session=session, caller=caller, api_id=parse_id(apiId, ApiNotFound), data=body
    )
    return ApiRead.of(*view)


@router.delete(
    "/{apiId}",
    status_code=204,
    responses=problems(Conflict, detail="The API is deployed: undeploy it first."),
)
async def delete_api(apiId: str, caller: Deleter, session: SessionDep) -> Response:
    """Refused (409) while any revision of the API is deployed; removes its revisions."""
    await api_service.delete(session=session, caller=caller, api_id=parse_id(apiId, ApiNotFound))
    return Response(status_code=204)


@router.get("/{apiId}/spec", response_model=dict[str, Any])
async def get_api_spec(apiId: str, caller: Reader, session: SessionDep) -> dict[str, Any]:
    """The OpenAPI document the API was imported from, as imported."""
    return await api_service.spec_document(
        session=session, caller=caller, api_id=parse_id(apiId, ApiNotFound)
    )
