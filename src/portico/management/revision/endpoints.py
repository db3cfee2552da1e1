from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.api.service import ApiNotFound
from portico.management.pages import PageRead
from portico.management.revision import service as revision_service
from portico.management.revision.schemas import (
    BindingsChange,
    RevisionCreate,
    RevisionRead,
    RouteSpecReplace,
    ServiceSpecReplace,
)
from portico.management.revision.service import RevisionNotFound

router = APIRouter(prefix="/api/orgs/{orgId}/apis", tags=["apis"])

LIST = ListSpec(
    sortable=frozenset({"number", "createdAt"}),
    default_sort="-number",
    filterable=frozenset({"status"}),
)
Reader = Annotated[OrgCaller, Depends(require("api.read"))]
Editor = Annotated[OrgCaller, Depends(require("api.update"))]
Deleter = Annotated[OrgCaller, Depends(require("api.delete"))]


@router.get("/{apiId}/revisions", response_model=PageRead[RevisionRead])
async def list_revisions(
    apiId: str,
    caller: Reader,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> PageRead[RevisionRead]:
    """Newest first by default; ``?status=ACTIVE`` or ``INACTIVE`` filters."""
    page = await revision_service.list_(
        session=session, caller=caller, api_id=parse_id(apiId, ApiNotFound), query=query
    )
    return PageRead[RevisionRead](
        items=[RevisionRead.of(*view) for view in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )


@router.post("/{apiId}/revisions", response_model=RevisionRead, status_code=201)
async def create_revision(
    apiId: str, body: RevisionCreate, caller: Editor, session: SessionDep
) -> RevisionRead:
    """A new INACTIVE revision numbered after the API's last one; specs are checked for
    structure only (plugin configs are checked by deploy)."""
    view = await revision_service.create(
        session=session, caller=caller, api_id=parse_id(apiId, ApiNotFound), data=body
    )
    return RevisionRead.of(*view)


@router.get("/{apiId}/revisions/{revisionId}", response_model=RevisionRead)
async def get_revision(
    apiId: str, revisionId: str, caller: Reader, session: SessionDep
) -> RevisionRead:
    view = await revision_service.view(
        session=session,
        caller=caller,
        api_id=parse_id(apiId, ApiNotFound),
        revision_id=parse_id(revisionId, RevisionNotFound),
    )
    return RevisionRead.of(*view)


@router.delete(
    "/{apiId}/revisions/{revisionId}",
    status_code=204,
    responses=problems(Conflict, detail="The revision is deployed."),
)
async def delete_revision(
    apiId: str, revisionId: str, caller: Deleter, session: SessionDep
) -> Response:
    """Only INACTIVE revisions can be deleted (409 otherwise)."""
    await revision_service.delete(
        session=session,
        caller=caller,
        api_id=parse_id(apiId, ApiNotFound),
        revision_id=parse_id(revisionId, RevisionNotFound),
    )
    return Response(status_code=204)


@router.put(
    "/{apiId}/revisions/{revisionId}/service-spec",
    response_model=RevisionRead,
    responses=problems(Conflict, detail="The revision is deployed: clone it to change it."),
)
async def replace_service_spec(
    apiId: str, revisionId: str, body: ServiceSpecReplace, caller: Editor, session: SessionDep
) -> RevisionRead:
    """Structural validation only; an ACTIVE revision cannot be edited (409)."""
    view = await revision_service.replace_service_spec(
        session=session,
        caller=caller,
        api_id=parse_id(apiId, ApiNotFound),
        revision_id=parse_id(revisionId, RevisionNotFound),
        service_spec=body.service_spec,
    )
    return RevisionRead.of(*view)


@router.put(
    "/{apiId}/revisions/{revisionId}/route-spec",
    response_model=RevisionRead,
    responses=problems(Conflict, detail="The revision is deployed: clone it to change it."),
)
async def replace_route_spec(
    apiId: str, revisionId: str, body: RouteSpecReplace, caller: Editor, session: SessionDep
) -> RevisionRead:
    """Structural validation only; an ACTIVE revision cannot be edited (409)."""
    view = await revision_service.replace_route_spec(
        session=session,
        caller=caller,
        api_id=parse_id(apiId, ApiNotFound),
        revision_id=parse_id(revisionId, RevisionNotFound),
        route_spec=body.route_spec,
    )
    return RevisionRead.of(*view)


@router.post("/{apiId}/revisions/{revisionId}/clone", response_model=RevisionRead, status_code=201)
async def clone_revision(
    apiId: str, revisionId: str, caller: Editor, session: SessionDep
) -> RevisionRead:
    """A new INACTIVE revision with this one's specs and upstream bindings."""
    view = await revision_service.clone(
        session=session,
        caller=caller,
        api_id=parse_id(apiId, ApiNotFound),
        revision_id=parse_id(revisionId, RevisionNotFound),
    )
    return RevisionRead.of(*view)


@router.patch(
    "/{apiId}/revisions/{revisionId}/upstream-bindings/add",
    response_model=RevisionRead,
    responses=problems(Conflict, detail="The revision is deployed: clone it to change it."),
)
async def add_upstream_bindings(
    apiId: str, revisionId: str, body: BindingsChange, caller: Editor, session: SessionDep
) -> RevisionRead:
    """Adds a binding per given environment, overriding that environment's binding; the
    others stay. The binding of an environment the revision is live in cannot change."""
    view = await revision_service.add_bindings(
        session=session,
        caller=caller,
        api_id=parse_id(apiId, ApiNotFound),
        revision_id=parse_id(revisionId, RevisionNotFound),
        data=body,
    )
    return RevisionRead.of(*view)


@router.patch(
    "/{apiId}/revisions/{revisionId}/upstream-bindings",
    response_model=RevisionRead,
    responses=problems(Conflict, detail="The revision is deployed: clone it to change it."),
)
async def replace_upstream_bindings(
    apiId: str, revisionId: str, body: BindingsChange, caller: Editor, session: SessionDep
) -> RevisionRead:
    """REPLACES every binding with the body's. A body of any other shape is a 400 and
    changes nothing (never a silent clear); ``{"environmentUpstreams": []}`` clears."""
    view = await revision_service.replace_bindings(
        session=session,
        caller=caller,
        api_id=parse_id(apiId, ApiNotFound),
        revision_id=parse_id(revisionId, RevisionNotFound),
        data=body,
    )
    return RevisionRead.of(*view)
