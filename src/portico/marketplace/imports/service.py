"""Gateway imports: the remote inventory, imports of one or all APIs and products, the start
of an import job, and what was imported from a connection.

Every read of a remote side happens outside any transaction: what the request read first
(the caller, the connection) is ended with ``end_reads`` before the wait, and the writes
come after, in a new transaction the request still owns, on the connection read again (a
connection deleted meanwhile is a 404, not a node pointing at nothing). So an import writes
everything or nothing, and a slow remote side never holds SQLite's write lock.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import job_worker
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.db.session import end_reads
from portico.core.envelope import BulkFailure
from portico.core.errors import PorticoError
from portico.core.filter_values import FilterValues
from portico.core.jobs import Job
from portico.core.pagination import ListQuery, Page
from portico.core.sealing import SecretBox
from portico.marketplace.access import SiteCaller
from portico.marketplace.connection.models import GatewayConnection
from portico.marketplace.connection.repository import GatewayConnectionRepository
from portico.marketplace.connection.service import ConnectionNotFound
from portico.marketplace.connectors.base import (
    Outbound,
    RemoteApi,
    RemoteApiDetail,
    RemoteProduct,
)
from portico.marketplace.imports import inventory, writer
from portico.marketplace.imports.inventory import InventoryCache, Row
from portico.marketplace.imports.jobs import IMPORT_APIS
from portico.marketplace.imports.problems import RemoteFailed, RemoteProductNotFound
from portico.marketplace.imports.remote import Fetched, Remote
from portico.marketplace.imports.repository import ImportedFilters, ImportRepository
from portico.marketplace.imports.schemas import (
    ApiImportOutcome,
    JobStart,
    ProductImportOutcome,
)
from portico.marketplace.imports.writer import Origin, Written
from portico.marketplace.node.models import Bundle, CatalogueNode, ModerationState, Visibility

MODULE = writer.MODULE
T = TypeVar("T")
OutcomeT = TypeVar("OutcomeT", ApiImportOutcome, ProductImportOutcome)


@dataclass(frozen=True)
class Context:
    """What every import needs beside the request's session and caller."""

    box: SecretBox
    outbound: Outbound
    database: Database
    clock: Clock
    cache: InventoryCache


# ------------------------------------------------------------------ the remote inventory


async def remote_apis(
    *,
    session: AsyncSession,
    context: Context,
    connection_id: uuid.UUID,
    query: ListQuery,
    refresh: bool,
) -> Page[Row[RemoteApi]]:
    connection = await _connection(session, connection_id)
    remote = _remote(connection, context)
    await end_reads(session)
    apis = await _inventory(context, connection, "apis", remote.list_apis, refresh=refresh)
    node_ids = await ImportRepository(session).node_ids(connection.id, Bundle.APIS)
    return inventory.page_of(
        apis,
        query,
        id_key="api_id",
        id_of=lambda a: a.api_id,
        title_of=lambda a: a.title,
        node_ids=node_ids,
    )


async def remote_products(
    *,
    session: AsyncSession,
    context: Context,
    connection_id: uuid.UUID,
    query: ListQuery,
    refresh: bool,
) -> Page[Row[RemoteProduct]]:
    connection = await _connection(session, connection_id)
    remote = _remote(connection, context)
    remote.require_products()
    await end_reads(session)
    products = await _inventory(
        context, connection, "products", remote.list_products, refresh=refresh
    )
    node_ids = await ImportRepository(session).node_ids(connection.id, Bundle.API_PRODUCTS)
    return inventory.page_of(
        products,
        query,
        id_key="product_id",
        id_of=lambda p: p.product_id,
        title_of=lambda p: p.title,
        node_ids=node_ids,
    )


async def _inventory(
    context: Context,
    connection: GatewayConnection,
    kind: str,
    read: Callable[[], Awaitable[Sequence[T]]],
    *,
    refresh: bool,
) -> Sequence[T]:
    now = context.clock.now()
    if not refresh:
        cached: Sequence[T] | None = context.cache.get(
            connection.id, kind, connection.updated_at, now
        )
        if cached is not None:
            return cached
    items = await read()
    context.cache.put(connection.id, kind, connection.updated_at, now, items)
    return items


# ------------------------------------------------------------------ APIs


async def import_api(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    context: Context,
    connection_id: uuid.UUID,
    api_id: str,
) -> Written:
    connection = await _connection(session, connection_id)
    remote = _remote(connection, context)
    await end_reads(session)
    async with context.outbound.reading() as outbound:
        detail = await remote.reading(outbound).fetch_api(api_id)
    origin = await _origin(session, connection_id, caller, context)
    return await writer.write_api(session, origin, detail)


async def import_apis(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    context: Context,
    connection_id: uuid.UUID,
    api_ids: Sequence[str] | None,
) -> Report[ApiImportOutcome]:
    """Every API of the remote side (or those of ``api_ids``, in that order), read a few at
    once, then written together; one that cannot be read is reported, not written."""
    connection = await _connection(session, connection_id)
    remote = _remote(connection, context)
    await end_reads(session)
    async with context.outbound.reading() as outbound:
        remote = remote.reading(outbound)
        listed = await remote.list_apis()
        context.cache.put(connection.id, "apis", connection.updated_at, context.clock.now(), listed)
        selected, unknown = _select(listed, api_ids, lambda a: a.api_id)
        fetched = await remote.fetch_many(selected)
    origin = await _origin(session, connection_id, caller, context)
    known = await writer.known_apis(session, origin, [api.api_id for api in selected])
    report: Report[ApiImportOutcome] = Report()
    for missing in unknown:
        report.fail(missing, remote.no_api(missing), _failed_api(missing))
    for api, result in zip(selected, fetched, strict=True):
        if isinstance(result, RemoteApiDetail):
            try:
                written = await writer.write_api(session, origin, result, known=known)
            except RemoteFailed as refused:
                result = refused
            else:
                report.add(
                    api.api_id,
                    ApiImportOutcome(
                        api_id=api.api_id,
                        node_id=written.node.id,
                        outcome="created" if written.created else "updated",
                        detail=None,
                    ),
                )
                continue
        report.fail(api.api_id, result, _failed_api(api.api_id))
    return report.ordered(api_ids if api_ids is not None else [a.api_id for a in selected])


def _failed_api(api_id: str) -> Callable[[str], ApiImportOutcome]:
    return lambda detail: ApiImportOutcome(
        api_id=api_id, node_id=None, outcome="failed", detail=detail
    )


@dataclass
class Report(Generic[OutcomeT]):
    """A bulk import's per-item outcomes, and its failures as ``meta.failed`` lists them."""

    outcomes: dict[str, OutcomeT] = field(default_factory=dict)
    failures: dict[str, BulkFailure] = field(default_factory=dict)

    def add(self, item_id: str, outcome: OutcomeT) -> None:
        self.outcomes[item_id] = outcome

    def fail(self, item_id: str, error: PorticoError, outcome: Callable[[str], OutcomeT]) -> None:
        self.outcomes[item_id] = outcome(error.detail)
        self.failures[item_id] = BulkFailure(id=item_id, status=error.status, detail=error.detail)

    def ordered(self, order: Sequence[str]) -> Report[OutcomeT]:
        ids = list(dict.fromkeys(order))
        return Report(
            {i: self.outcomes[i] for i in ids},
            {i: self.failures[i] for i in ids if i in self.failures},
        )


# ------------------------------------------------------------------ products


@dataclass(frozen=True)
class ProductWritten:
    written: Written
    apis: list[uuid.UUID]
    imported_apis: list[str]


async def import_product(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    context: Context,
    connection_id: uuid.UUID,
    product_id: str,
) -> ProductWritten:
    connection = await _connection(session, connection_id)
    remote = _remote(connection, context)
    remote.require_products()
    await end_reads(session)
    async with context.outbound.reading() as outbound:
        remote = remote.reading(outbound)
        products = await remote.list_products()
        product = next((p for p in products if p.product_id == product_id), None)
        if product is None:
            raise _no_product(remote, product_id)
        fetched = await _missing_apis(session, remote, [product])
    origin = await _origin(session, connection_id, caller, context)
    failure = _product_failure(product, fetched)
    if failure is not None:
        raise failure
    return await _write_product(session, origin, product, fetched)


async def import_products(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    context: Context,
    connection_id: uuid.UUID,
    product_ids: Sequence[str] | None,
) -> Report[ProductImportOutcome]:
    """Every product (or those of ``product_ids``), each with the APIs it lists that were
    not imported yet. A product one of whose APIs cannot be read is reported and not
    written, nor are the APIs read for it alone."""
    connection = await _connection(session, connection_id)
    remote = _remote(connection, context)
    remote.require_products()
    await end_reads(session)
    async with context.outbound.reading() as outbound:
        remote = remote.reading(outbound)
        products = await remote.list_products()
        now = context.clock.now()
        context.cache.put(connection.id, "products", connection.updated_at, now, products)
        selected, unknown = _select(products, product_ids, lambda p: p.product_id)
        fetched = await _missing_apis(session, remote, selected)
    origin = await _origin(session, connection_id, caller, context)
    report: Report[ProductImportOutcome] = Report()
    for missing in unknown:
        report.fail(missing, _no_product(remote, missing), _failed_product(missing))
    for product in selected:
        failure = _product_failure(product, fetched)
        if failure is None:
            try:
                done = await _write_product(session, origin, product, fetched)
            except RemoteFailed as refused:
                failure = refused
            else:
                report.add(
                    product.product_id,
                    ProductImportOutcome(
                        product_id=product.product_id,
                        node_id=done.written.node.id,
                        outcome="created" if done.written.created else "updated",
                        detail=None,
                        imported_apis=done.imported_apis,
                    ),
                )
                continue
        report.fail(product.product_id, failure, _failed_product(product.product_id))
    order = product_ids if product_ids is not None else [p.product_id for p in selected]
    return report.ordered(order)


def _failed_product(product_id: str) -> Callable[[str], ProductImportOutcome]:
    return lambda detail: ProductImportOutcome(
        product_id=product_id, node_id=None, outcome="failed", detail=detail, imported_apis=[]
    )


def _no_product(remote: Remote, product_id: str) -> RemoteProductNotFound:
    return RemoteProductNotFound(
        f"{remote.label} exposes no product with product_id '{product_id}'"
    )


async def _missing_apis(
    session: AsyncSession, remote: Remote, products: Sequence[RemoteProduct]
) -> dict[str, Fetched]:
    """Read the APIs of ``products`` that were not imported yet (api_id → the API, or why
    it cannot be read). The store is read first (which ones exist), then the request's reads
    end again before the remote side is asked."""
    wanted = list(dict.fromkeys(a for p in products for a in p.api_ids))
    present = await ImportRepository(session).node_ids(remote.connection_id, Bundle.APIS, wanted)
    await end_reads(session)
    missing = [a for a in wanted if a not in present]
    if not missing:
        return {}
    listed = {a.api_id: a for a in await remote.list_apis()}
    asked = [listed[a] for a in missing if a in listed]
    results: dict[str, Fetched] = {a: remote.no_api(a) for a in missing if a not in listed}
    for api, result in zip(asked, await remote.fetch_many(asked), strict=True):
        results[api.api_id] = result
    return results


def _product_failure(product: RemoteProduct, fetched: Mapping[str, Fetched]) -> RemoteFailed | None:
    for api_id in product.api_ids:
        result = fetched.get(api_id)
        if result is not None and not isinstance(result, RemoteApiDetail):
            return RemoteFailed(
                f"product '{product.product_id}' lists API '{api_id}', which cannot be "
                f"imported: {result.detail}"
            )
    return None


async def _write_product(
    session: AsyncSession, origin: Origin, product: RemoteProduct, fetched: Mapping[str, Fetched]
) -> ProductWritten:
    imported: list[str] = []
    for api_id in dict.fromkeys(product.api_ids):
        result = fetched.get(api_id)
        if isinstance(result, RemoteApiDetail):
            written = await writer.write_api(session, origin, result)
            if written.created:
                imported.append(api_id)
    # read after the writes: the nodes as they are now (one deleted meanwhile is left out)
    nodes = await ImportRepository(session).node_ids(
        origin.connection_id, Bundle.APIS, list(product.api_ids)
    )
    apis = [nodes[a] for a in dict.fromkeys(product.api_ids) if a in nodes]
    written = await writer.write_product(session, origin, product, apis)
    return ProductWritten(written, apis, imported)


# ------------------------------------------------------------------ jobs


async def start_job(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    connection_id: uuid.UUID,
    data: JobStart,
    now: datetime,
) -> Job:
    connection = await _connection(session, connection_id)
    params: dict[str, Any] = {"connection_id": str(connection.id)}
    if data.api_ids is not None:
        params["api_ids"] = list(dict.fromkeys(data.api_ids))
    job = await job_worker.enqueue(
        session, kind=IMPORT_APIS, params=params, created_by=caller.user.id, now=now
    )
    count = "every API" if data.api_ids is None else f"{len(params['api_ids'])} APIs"
    await caller.audit(
        session,
        "job.start",
        entity_type="job",
        entity_id=job.id,
        module=MODULE,
        summary=f"started {IMPORT_APIS} job {job.id} for {count} of gateway connection "
        f"{connection.name}",
        after={"id": str(job.id), "kind": job.kind, "params": params},
    )
    return job


# ------------------------------------------------------------------ what was imported


async def imported(
    *,
    session: AsyncSession,
    connection_id: uuid.UUID,
    bundle: Bundle,
    query: ListQuery,
) -> Page[CatalogueNode]:
    connection = await _connection(session, connection_id)
    repository = ImportRepository(session)
    statement = repository.imported_from(connection.id, bundle, _filters(query.filters))
    return await repository.page(statement, query)


async def product_apis(
    *, session: AsyncSession, products: Sequence[CatalogueNode]
) -> dict[uuid.UUID, list[uuid.UUID]]:
    return await ImportRepository(session).product_apis([p.id for p in products])


def _filters(raw: Mapping[str, str]) -> ImportedFilters:
    values = FilterValues(raw)
    state = values.choice("moderation_state", ModerationState)
    visibility = values.choice("visibility", Visibility)
    published = values.boolean("published")
    values.check()
    return ImportedFilters(
        moderation_state=state,
        visibility=visibility,
        published=published,
        remote_id=raw.get("remote_id"),
    )


# ------------------------------------------------------------------ shared


async def _connection(session: AsyncSession, connection_id: uuid.UUID) -> GatewayConnection:
    connection = await GatewayConnectionRepository(session).get(connection_id)
    if connection is None:
        raise ConnectionNotFound()
    return connection


def _remote(connection: GatewayConnection, context: Context) -> Remote:
    return Remote.of(
        connection,
        box=context.box,
        outbound=context.outbound,
        database=context.database,
        clock=context.clock,
    )


async def _origin(
    session: AsyncSession, connection_id: uuid.UUID, caller: SiteCaller, context: Context
) -> Origin:
    """After the wait: the connection as it is now (locked until the request commits, on
    PostgreSQL), or a 404 if it was deleted meanwhile."""
    connection = await GatewayConnectionRepository(session).reread(connection_id)
    if connection is None:
        raise ConnectionNotFound()
    return Origin(
        connection_id=connection.id,
        connection_name=connection.name,
        source=connection.source,
        actor=caller.actor,
        now=context.clock.now(),
    )


def _select(
    items: Sequence[T], wanted: Sequence[str] | None, id_of: Callable[[T], str]
) -> tuple[list[T], list[str]]:
    """The items named by ``wanted`` (each once, in its order; all when None) and the ids
    of ``wanted`` that name none."""
    if wanted is None:
        return list(items), []
    by_id = {id_of(item): item for item in items}
    ids = list(dict.fromkeys(wanted))
    return [by_id[i] for i in ids if i in by_id], [i for i in ids if i not in by_id]
