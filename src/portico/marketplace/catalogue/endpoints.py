"""``/apis`` and ``/products``: the API and product catalogue (module ``content``). Reading
needs ``access content``; writing ``create``, ``edit any`` or ``delete any`` ``apis`` or
``api_products content``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.catalogue import service as catalogue_service
from portico.marketplace.catalogue.schemas import (
    ApiCreate,
    ApiListItem,
    ApiRead,
    ApiUpdate,
    ProductCreate,
    ProductRead,
    ProductUpdate,
)
from portico.marketplace.catalogue.service import (
    ApiNotFound,
    ProductNotFound,
    RemoteIdTaken,
    UnknownReference,
)
from portico.marketplace.node.filters import SOURCE_VALUES
from portico.marketplace.node.models import ModerationState, Visibility

router = APIRouter()

LIST = ListSpec(
    sortable=frozenset({"title", "created_at", "updated_at", "moderation_state"}),
    default_sort="title",
    filterable=frozenset(
        {"source", "moderation_state", "visibility", "organisation", "published", "title", "search"}
    ),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "source": {
        "description": "custom (written in the portal), imported (from any gateway "
        "connection), or a gateway connection's id (imported from it).",
        "schema": {
            "anyOf": [
                {"type": "string", "enum": ["custom", "imported"]},
                {"type": "string", "format": "uuid"},
            ]
        },
    },
    "moderation_state": {
        "description": "Nodes in this editorial state.",
        "schema": {"type": "string", "enum": [s.value for s in ModerationState]},
    },
    "visibility": {
        "description": "Nodes with this visibility.",
        "schema": {"type": "string", "enum": [v.value for v in Visibility]},
    },
    "organisation": {
        "description": "Nodes owned by this portal organisation (its id).",
        "schema": {"type": "string", "format": "uuid"},
    },
    "published": {
        "description": "Whether the portal shows them.",
        "schema": {"type": "string", "enum": ["true", "false"]},
    },
    "title": {"description": "Nodes with exactly this title."},
    "search": {
        "description": "Nodes whose title contains this text, ignoring the case of ASCII "
        "letters (A-Z and a-z; other letters match as written).",
    },
}
LIST_PARAMETERS = LIST.openapi_parameters(FILTER_PARAMETERS)
LIST_HELP = (
    f" Filters: `filter[source]` ({SOURCE_VALUES}), `filter[moderation_state]`, "
    "`filter[visibility]`, `filter[organisation]`, `filter[published]`, "
    "`filter[title]` (exact), `filter[search]` (in the title, ignoring ASCII case). "
    "Sorts: title (default), created_at, updated_at, moderation_state (then title); "
    "ties by id."
)
WRITE_REFUSED = {
    **problems(
        UnknownReference,
        detail="The body is not valid (`errors` names each field at fault: a malformed value, "
        "an OpenAPI document the reader refuses), or names an organisation, connection or "
        "API that does not exist (`unknown-reference`).",
    ),
}
CREATE_REFUSED = {
    **WRITE_REFUSED,
    **problems(
        RemoteIdTaken,
        detail="The connection already has a node of this bundle for this remote id.",
    ),
}

Reader = Annotated[SiteCaller, Depends(require("access content"))]


def _location(request: Request, path: str) -> str:
    return f"{request.scope.get('root_path', '')}{path}"


# ---------------------------------------------------------------------------------------- APIs


@router.get(
    "/apis",
    tags=["apis"],
    response_model=Collection[ApiListItem],
    openapi_extra={"parameters": LIST_PARAMETERS},
    description="All API nodes, with their source metadata; each API's OpenAPI document is "
    "left out (`GET /apis/{node}` has it)." + LIST_HELP,
)
async def list_apis(
    request: Request,
    _caller: Reader,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[ApiListItem]:
    page = await catalogue_service.list_apis(session=session, query=query)
    return collection(request, page, page.items)


@router.post(
    "/apis",
    tags=["apis"],
    status_code=201,
    response_model=Envelope[ApiRead],
    responses=CREATE_REFUSED,
)
async def create_api(
    body: ApiCreate,
    request: Request,
    response: Response,
    caller: Annotated[SiteCaller, Depends(require("create apis content"))],
    session: SessionDep,
) -> Envelope[ApiRead]:
    """A draft API node, unpublished and internal. Without ``connection_id`` it is written in
    the portal (``source.type`` custom); with it, bound to that gateway connection
    (imported), ``api_id``, ``uuid`` and ``revision`` recording the remote API."""
    created = await catalogue_service.create_api(
        session=session, caller=caller, data=body, now=request.app.state.clock.now()
    )
    response.headers["Location"] = _location(request, f"/apis/{created.id}")
    return Envelope[ApiRead](data=created)


@router.get("/apis/{node}", tags=["apis"], response_model=Envelope[ApiRead])
async def get_api(node: str, _caller: Reader, session: SessionDep) -> Envelope[ApiRead]:
    """One API node with its source metadata and OpenAPI document."""
    found = await catalogue_service.get_api(session=session, node_id=parse_uuid(node, ApiNotFound))
    return Envelope[ApiRead](data=found)


@router.patch(
    "/apis/{node}", tags=["apis"], response_model=Envelope[ApiRead], responses=WRITE_REFUSED
)
async def update_api(
    node: str,
    body: ApiUpdate,
    request: Request,
    caller: Annotated[SiteCaller, Depends(require("edit any apis content"))],
    session: SessionDep,
) -> Envelope[ApiRead]:
    """Change the fields sent (title, version, overview, documentation, organisation)."""
    updated = await catalogue_service.update_api(
        session=session,
        caller=caller,
        node_id=parse_uuid(node, ApiNotFound),
        data=body,
        now=request.app.state.clock.now(),
    )
    return Envelope[ApiRead](data=updated)


@router.delete("/apis/{node}", tags=["apis"], status_code=204, response_class=Response)
async def delete_api(
    node: str,
    caller: Annotated[SiteCaller, Depends(require("delete any apis content"))],
    session: SessionDep,
) -> Response:
    """Revoke the API's active and pending subscriptions, then delete it; the products that
    list it no longer do."""
    await catalogue_service.delete_api(
        session=session, caller=caller, node_id=parse_uuid(node, ApiNotFound)
    )
    return Response(status_code=204)


# ------------------------------------------------------------------------------------ products


@router.get(
    "/products",
    tags=["products"],
    response_model=Collection[ProductRead],
    openapi_extra={"parameters": LIST_PARAMETERS},
    description="All API product nodes, with their source metadata." + LIST_HELP,
)
async def list_products(
    request: Request,
    _caller: Reader,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[ProductRead]:
    page = await catalogue_service.list_products(session=session, query=query)
    return collection(request, page, page.items)


@router.post(
    "/products",
    tags=["products"],
    status_code=201,
    response_model=Envelope[ProductRead],
    responses=CREATE_REFUSED,
)
async def create_product(
    body: ProductCreate,
    request: Request,
    response: Response,
    caller: Annotated[SiteCaller, Depends(require("create api_products content"))],
    session: SessionDep,
) -> Envelope[ProductRead]:
    """A draft product node, unpublished and internal. With ``connection_id``, bound to that
    gateway connection: ``product_id`` is the remote product, ``gateway_type`` the kind of
    gateway (the connection's source type by default)."""
    created = await catalogue_service.create_product(
        session=session, caller=caller, data=body, now=request.app.state.clock.now()
    )
    response.headers["Location"] = _location(request, f"/products/{created.id}")
    return Envelope[ProductRead](data=created)


@router.get("/products/{node}", tags=["products"], response_model=Envelope[ProductRead])
async def get_product(node: str, _caller: Reader, session: SessionDep) -> Envelope[ProductRead]:
    """One product node with its source metadata, APIs and quota."""
    found = await catalogue_service.get_product(
        session=session, node_id=parse_uuid(node, ProductNotFound)
    )
    return Envelope[ProductRead](data=found)


@router.patch(
    "/products/{node}",
    tags=["products"],
    response_model=Envelope[ProductRead],
    responses=WRITE_REFUSED,
)
async def update_product(
    node: str,
    body: ProductUpdate,
    request: Request,
    caller: Annotated[SiteCaller, Depends(require("edit any api_products content"))],
    session: SessionDep,
) -> Envelope[ProductRead]:
    """Change the fields sent (title, description, associated_apis, quota, organisation)."""
    updated = await catalogue_service.update_product(
        session=session,
        caller=caller,
        node_id=parse_uuid(node, ProductNotFound),
        data=body,
        now=request.app.state.clock.now(),
    )
    return Envelope[ProductRead](data=updated)


@router.delete("/products/{node}", tags=["products"], status_code=204, response_class=Response)
async def delete_product(
    node: str,
    caller: Annotated[SiteCaller, Depends(require("delete any api_products content"))],
    session: SessionDep,
) -> Response:
    """Disassociate its APIs, revoke its active and pending subscriptions, then delete it."""
    await catalogue_service.delete_product(
        session=session, caller=caller, node_id=parse_uuid(node, ProductNotFound)
    )
    return Response(status_code=204)
