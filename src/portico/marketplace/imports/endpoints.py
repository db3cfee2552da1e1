"""Gateway imports (permission ``administer gateway sync``; what was imported: ``access
content``): a connection's remote inventory, imports of its APIs and products, one or all,
now or in a background job."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from portico.core.db.session import SessionDep
from portico.core.envelope import (
    BulkMeta,
    BulkResult,
    Collection,
    Envelope,
    JobAccepted,
    accepted,
    collection,
    created,
)
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.catalogue.schemas import ApiListItem, ApiRead, ProductRead
from portico.marketplace.connection.endpoints import box, outbound
from portico.marketplace.connection.service import ConnectionNotFound
from portico.marketplace.imports import inventory
from portico.marketplace.imports import service as import_service
from portico.marketplace.imports.inventory import InventoryCache
from portico.marketplace.imports.problems import RemoteFailed, SourceWithoutProducts
from portico.marketplace.imports.schemas import (
    ApiImport,
    ApiImportAll,
    ApiImportOutcome,
    JobStart,
    ProductImport,
    ProductImportAll,
    ProductImportOutcome,
    RemoteApiRead,
    RemoteProductRead,
)
from portico.marketplace.imports.service import Context, OutcomeT, Report
from portico.marketplace.node.models import Bundle, ModerationState, Visibility
from portico.marketplace.node.schemas import NodeSummary

router = APIRouter(prefix="/gateways/connections", tags=["gateway imports"])

Syncer = Annotated[SiteCaller, Depends(require("administer gateway sync"))]
Reader = Annotated[SiteCaller, Depends(require("access content"))]

REMOTE_APIS = inventory.spec("api_id")
REMOTE_PRODUCTS = inventory.spec("product_id")
IMPORTED = ListSpec(
    sortable=frozenset({"title", "created_at", "updated_at", "remote_id"}),
    default_sort="title",
    filterable=frozenset({"moderation_state", "visibility", "published", "remote_id"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
IMPORTED_FILTERS: dict[str, dict[str, Any]] = {
    "moderation_state": {
        "description": "Nodes in this editorial state.",
        "schema": {"type": "string", "enum": [s.value for s in ModerationState]},
    },
    "visibility": {
        "description": "Nodes of this visibility.",
        "schema": {"type": "string", "enum": [v.value for v in Visibility]},
    },
    "published": {
        "description": "Whether the portal shows them.",
        "schema": {"type": "string", "enum": ["true", "false"]},
    },
    "remote_id": {"description": "The node imported from this remote id."},
}

FAILED = problems(
    RemoteFailed,
    detail="The connection's remote side could not be read (unreachable, 5xx, credentials "
    "refused, refused by the SSRF guard, not what was expected); `detail` names the "
    "connection and says why. Nothing was imported.",
)
NO_PRODUCTS = problems(
    SourceWithoutProducts, detail="The connection's source type has no products (openapi)."
)
WRITTEN = "Imported again: its node updated in place."


def context(request: Request) -> Context:
    state = request.app.state
    cache = getattr(state, "remote_inventory", None)
    if cache is None:  # one per application, made on first use
        cache = state.remote_inventory = InventoryCache()
    return Context(
        box=box(request),
        outbound=outbound(request),
        database=state.database,
        clock=state.clock,
        cache=cache,
    )


ContextDep = Annotated[Context, Depends(context)]


# ------------------------------------------------------------------ the remote inventory


@router.get(
    "/{gateway_connection}/remote/apis",
    response_model=Collection[RemoteApiRead],
    responses=FAILED,
    openapi_extra={"parameters": inventory.parameters("api_id", "APIs")},
)
async def list_remote_apis(
    gateway_connection: str,
    request: Request,
    _caller: Syncer,
    session: SessionDep,
    context: ContextDep,
    query: ListQuery = Depends(list_query(REMOTE_APIS)),
) -> Collection[RemoteApiRead]:
    """The APIs the remote side exposes now (read at most five minutes ago; ``refresh=1``
    reads it again), each marked ``imported`` with its ``node_id`` and ``import_status``.
    Filters: ``filter[search]`` (title contains), ``filter[api_id]``, ``filter[name]``
    (exact title), ``filter[import_status]`` (new, existing)."""
    page = await import_service.remote_apis(
        session=session,
        context=context,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        query=query,
        refresh=inventory.wants_refresh(request.query_params.get("refresh")),
    )
    return collection(request, page, [RemoteApiRead.of(r.item, r.node_id) for r in page.items])


@router.get(
    "/{gateway_connection}/remote/products",
    response_model=Collection[RemoteProductRead],
    responses={**FAILED, **NO_PRODUCTS},
    openapi_extra={"parameters": inventory.parameters("product_id", "Products")},
)
async def list_remote_products(
    gateway_connection: str,
    request: Request,
    _caller: Syncer,
    session: SessionDep,
    context: ContextDep,
    query: ListQuery = Depends(list_query(REMOTE_PRODUCTS)),
) -> Collection[RemoteProductRead]:
    """The products the remote side exposes now (cached like ``remote/apis``), each marked
    ``imported`` with its ``node_id``. 409 for a source without products."""
    page = await import_service.remote_products(
        session=session,
        context=context,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        query=query,
        refresh=inventory.wants_refresh(request.query_params.get("refresh")),
    )
    return collection(request, page, [RemoteProductRead.of(r.item, r.node_id) for r in page.items])


# ------------------------------------------------------------------ APIs


@router.get(
    "/{gateway_connection}/apis",
    response_model=Collection[ApiListItem],
    openapi_extra={"parameters": IMPORTED.openapi_parameters(IMPORTED_FILTERS)},
)
async def list_imported_apis(
    gateway_connection: str,
    request: Request,
    _caller: Reader,
    session: SessionDep,
    query: ListQuery = Depends(list_query(IMPORTED)),
) -> Collection[ApiListItem]:
    """The API nodes imported from this connection, by title."""
    page = await import_service.imported(
        session=session,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        bundle=Bundle.APIS,
        query=query,
    )
    return collection(request, page, [ApiListItem.of(node) for node in page.items])


@router.post(
    "/{gateway_connection}/apis/import",
    response_model=Envelope[ApiRead],
    status_code=201,
    responses={200: {"model": Envelope[ApiRead], "description": WRITTEN}, **FAILED},
)
async def import_api(
    gateway_connection: str,
    body: ApiImport,
    request: Request,
    caller: Syncer,
    session: SessionDep,
    context: ContextDep,
) -> Response:
    """Import one API now: its node with its OpenAPI document and remote revision, created
    (201, a draft) or, when it was imported before, updated in place (200). 404 names an
    ``api_id`` the remote side does not expose."""
    written = await import_service.import_api(
        session=session,
        caller=caller,
        context=context,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        api_id=body.api_id,
    )
    return _written(request, ApiRead.of(written.node), written.created)


@router.post(
    "/{gateway_connection}/apis/import/all",
    response_model=BulkResult[ApiImportOutcome],
    responses=FAILED,
)
async def import_all_apis(
    gateway_connection: str,
    caller: Syncer,
    session: SessionDep,
    context: ContextDep,
    body: ApiImportAll | None = None,
) -> BulkResult[ApiImportOutcome]:
    """Import every API of the remote side now, or those of ``api_ids``: one outcome per
    API (created, updated, failed with its detail), the failures also in ``meta.failed``
    (404: an api_id the remote side does not expose; 502: an API that cannot be read). For
    large inventories, start an ``import-apis`` job instead."""
    report = await import_service.import_apis(
        session=session,
        caller=caller,
        context=context,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        api_ids=body.api_ids if body is not None else None,
    )
    return _bulk(report)


@router.post(
    "/{gateway_connection}/jobs",
    response_model=JobAccepted,
    status_code=202,
)
async def start_job(
    gateway_connection: str,
    body: JobStart,
    request: Request,
    caller: Syncer,
    session: SessionDep,
) -> Response:
    """Start a background job (``import-apis``: the APIs, all or those of ``api_ids``,
    imported in batches): 202 with its ``job_id``, followed at ``GET /jobs/{job}``
    (progress, errors, result) and cancelled with ``DELETE /jobs/{job}``."""
    job = await import_service.start_job(
        session=session,
        caller=caller,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        data=body,
        now=request.app.state.clock.now(),
    )
    return accepted(request, str(job.id))


# ------------------------------------------------------------------ products


@router.get(
    "/{gateway_connection}/products",
    response_model=Collection[ProductRead],
    openapi_extra={"parameters": IMPORTED.openapi_parameters(IMPORTED_FILTERS)},
)
async def list_imported_products(
    gateway_connection: str,
    request: Request,
    _caller: Reader,
    session: SessionDep,
    query: ListQuery = Depends(list_query(IMPORTED)),
) -> Collection[ProductRead]:
    """The product nodes imported from this connection, by title, each with its APIs."""
    page = await import_service.imported(
        session=session,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        bundle=Bundle.API_PRODUCTS,
        query=query,
    )
    apis = await import_service.product_apis(session=session, products=page.items)
    return collection(
        request, page, [ProductRead.with_apis(node, apis[node.id]) for node in page.items]
    )


@router.post(
    "/{gateway_connection}/products/import",
    response_model=Envelope[ProductRead],
    status_code=201,
    responses={
        200: {"model": Envelope[ProductRead], "description": WRITTEN},
        **FAILED,
        **NO_PRODUCTS,
    },
)
async def import_product(
    gateway_connection: str,
    body: ProductImport,
    request: Request,
    caller: Syncer,
    session: SessionDep,
    context: ContextDep,
) -> Response:
    """Import one product now, with those of its APIs not imported yet: its node created
    (201) or updated in place (200), its APIs in the product's order."""
    done = await import_service.import_product(
        session=session,
        caller=caller,
        context=context,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        product_id=body.product_id,
    )
    read = ProductRead.with_apis(done.written.node, done.apis)
    return _written(request, read, done.written.created)


@router.post(
    "/{gateway_connection}/products/import/all",
    response_model=BulkResult[ProductImportOutcome],
    responses={**FAILED, **NO_PRODUCTS},
)
async def import_all_products(
    gateway_connection: str,
    caller: Syncer,
    session: SessionDep,
    context: ContextDep,
    body: ProductImportAll | None = None,
) -> BulkResult[ProductImportOutcome]:
    """Import every product now, or those of ``product_ids``, each with those of its APIs
    not imported yet: one outcome per product, the failures also in ``meta.failed``."""
    report = await import_service.import_products(
        session=session,
        caller=caller,
        context=context,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        product_ids=body.product_ids if body is not None else None,
    )
    return _bulk(report)


def _written(request: Request, read: NodeSummary, was_created: bool) -> Response:
    """201 with the node's address in the catalogue when created, else 200."""
    if was_created:
        base = request.scope.get("root_path", "")
        bundle = "apis" if read.bundle is Bundle.APIS else "products"
        return created(read, f"{base}/{bundle}/{read.id}")
    return JSONResponse({"data": read.model_dump(mode="json")})


def _bulk(report: Report[OutcomeT]) -> BulkResult[OutcomeT]:
    outcomes = list(report.outcomes.values())
    failed = list(report.failures.values())
    return BulkResult[OutcomeT](data=outcomes, meta=BulkMeta(count=len(outcomes), failed=failed))
