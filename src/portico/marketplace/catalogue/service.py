"""The API and product catalogue: create, read, list, update and delete nodes of the ``apis``
and ``api_products`` bundles.

A node is written in the portal (``custom``) or bound to a gateway connection (``imported``,
with the remote side's ids, unique per connection and bundle). New nodes start as drafts,
unpublished and ``internal`` (moderation, visibility and publishing have endpoints of their
own). Deleting follows the transition table: an API's deletion hooks run, then the node goes
(its product associations with it, by cascade); a product is first disassociated from its
APIs, then its hooks run, then it goes. A hook that raises aborts the request, and the
request's transaction takes everything with it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import Conflict, NotFound, ValidationFailed
from portico.core.filter_values import FilterValues
from portico.core.openapi_document import parse_document
from portico.core.pagination import ListQuery, Page
from portico.marketplace.access import SiteCaller
from portico.marketplace.catalogue.repository import CatalogueRepository, NodeFilters
from portico.marketplace.catalogue.schemas import (
    ApiCreate,
    ApiListItem,
    ApiRead,
    ApiUpdate,
    ProductCreate,
    ProductRead,
    ProductUpdate,
)
from portico.marketplace.connection.repository import GatewayConnectionRepository
from portico.marketplace.connectors.openapi import document_problem
from portico.marketplace.node import filters as node_filters
from portico.marketplace.node import hooks
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    SourceType,
    Visibility,
)
from portico.marketplace.node.moderation import INITIAL

T = TypeVar("T")

MODULE = "content"
ENTITY = "node"


class ApiNotFound(NotFound):
    default_detail = "API not found"


class ProductNotFound(NotFound):
    default_detail = "API product not found"


class UnknownReference(ValidationFailed):
    kind = "unknown-reference"
    title = "Unknown Reference"
    description = (
        "The body is well formed, but a field names something that does not exist: an "
        "organisation, a gateway connection, an API node. `errors` points at each such field "
        "(`pointer`) and says which id names nothing. Nothing was saved: correct the ids (list "
        "what exists first) and send the request again."
    )


class RemoteIdTaken(Conflict):
    default_detail = "the connection already has a node for this remote id"


@dataclass(frozen=True)
class _Kind:
    """What differs between APIs and products where the rules are the same."""

    bundle: Bundle
    operation: str
    label: str
    remote_field: str
    not_found: type[NotFound]


API = _Kind(Bundle.APIS, "api", "API", "api_id", ApiNotFound)
PRODUCT = _Kind(Bundle.API_PRODUCTS, "product", "API product", "product_id", ProductNotFound)


# ------------------------------------------------------------------------------------ reading


async def list_apis(*, session: AsyncSession, query: ListQuery) -> Page[ApiListItem]:
    page = await CatalogueRepository(session).page_of(
        Bundle.APIS, filters(query.filters), query, documentation=False
    )
    return _mapped(page, [ApiListItem.of(node) for node in page.items])


async def list_products(*, session: AsyncSession, query: ListQuery) -> Page[ProductRead]:
    repository = CatalogueRepository(session)
    page = await repository.page_of(Bundle.API_PRODUCTS, filters(query.filters), query)
    apis = await repository.product_apis([node.id for node in page.items])
    return _mapped(page, [ProductRead.with_apis(node, apis[node.id]) for node in page.items])


async def get_api(*, session: AsyncSession, node_id: uuid.UUID) -> ApiRead:
    return ApiRead.of(await _node(CatalogueRepository(session), API, node_id))


async def get_product(*, session: AsyncSession, node_id: uuid.UUID) -> ProductRead:
    repository = CatalogueRepository(session)
    return await _product_read(repository, await _node(repository, PRODUCT, node_id))


# ---------------------------------------------------------------------------------------- APIs


async def create_api(
    *, session: AsyncSession, caller: SiteCaller, data: ApiCreate, now: datetime
) -> ApiRead:
    repository = CatalogueRepository(session)
    documentation = None if data.documentation is None else await _document(data.documentation)
    node = _new_node(API, data.title, caller, now)
    node.version = data.version
    node.overview = data.overview
    node.documentation = documentation
    await _check_organisation(repository, data.organisation)
    node.organisation_id = data.organisation
    if data.connection_id is not None:
        await _bind(repository, node, API, data.connection_id, data.api_id)
        node.remote_uuid = data.uuid
        node.remote_revision = data.revision
    await repository.add(node)
    read = ApiRead.of(node)
    await _audit(caller, session, API, "create", node, f"created API {node.title}", after=read)
    return read


async def update_api(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    node_id: uuid.UUID,
    data: ApiUpdate,
    now: datetime,
) -> ApiRead:
    repository = CatalogueRepository(session)
    sent = data.model_fields_set
    documentation = None
    if "documentation" in sent and data.documentation is not None:
        # parsed before the row is locked: a large YAML document takes a while
        documentation = await _document(data.documentation)
    node = await _node(repository, API, node_id, lock=True)
    before = ApiRead.of(node)
    if "organisation" in sent:
        await _check_organisation(repository, data.organisation)
        node.organisation_id = data.organisation
    if data.title is not None:
        node.title = data.title
    if data.version is not None:
        node.version = data.version
    if data.overview is not None:
        node.overview = data.overview
    if "documentation" in sent:
        node.documentation = documentation
    after = ApiRead.of(node)
    if _changed(before, after):
        node.updated_at = now
        await session.flush()
        after = ApiRead.of(node)
        await _audit(
            caller, session, API, "update", node, f"updated API {node.title}", before, after
        )
    return after


async def delete_api(*, session: AsyncSession, caller: SiteCaller, node_id: uuid.UUID) -> None:
    """Its deletion hooks (the subscriptions' revocation), then the node; the products that
    listed it lose it by cascade."""
    repository = CatalogueRepository(session)
    node = await _node(repository, API, node_id, lock=True)
    before = ApiRead.of(node)
    await hooks.before_delete(session, node, f"the API '{node.title}' was deleted")
    await repository.delete(node)
    await _audit(caller, session, API, "delete", node, f"deleted API {node.title}", before)


# ------------------------------------------------------------------------------------ products


async def create_product(
    *, session: AsyncSession, caller: SiteCaller, data: ProductCreate, now: datetime
) -> ProductRead:
    repository = CatalogueRepository(session)
    node = _new_node(PRODUCT, data.title, caller, now)
    node.description = data.description
    node.quota = None if data.quota is None else data.quota.model_dump()
    await _check_organisation(repository, data.organisation)
    node.organisation_id = data.organisation
    await _check_apis(repository, data.associated_apis)
    if data.connection_id is not None:
        connection = await _bind(repository, node, PRODUCT, data.connection_id, data.product_id)
        node.gateway_type = data.gateway_type or connection
    await repository.add(node)
    await repository.set_product_apis(node.id, data.associated_apis)
    read = ProductRead.with_apis(node, list(data.associated_apis))
    summary = f"created API product {node.title}"
    await _audit(caller, session, PRODUCT, "create", node, summary, after=read)
    return read


async def update_product(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    node_id: uuid.UUID,
    data: ProductUpdate,
    now: datetime,
) -> ProductRead:
    repository = CatalogueRepository(session)
    sent = data.model_fields_set
    node = await _node(repository, PRODUCT, node_id, lock=True)
    before = await _product_read(repository, node)
    apis = before.associated_apis
    if "organisation" in sent:
        await _check_organisation(repository, data.organisation)
        node.organisation_id = data.organisation
    if data.associated_apis is not None:
        await _check_apis(repository, data.associated_apis)
        apis = list(data.associated_apis)
    if data.title is not None:
        node.title = data.title
    if data.description is not None:
        node.description = data.description
    if "quota" in sent:
        node.quota = None if data.quota is None else data.quota.model_dump()
    after = ProductRead.with_apis(node, apis)
    if _changed(before, after):
        if apis != before.associated_apis:
            await repository.set_product_apis(node.id, apis)
        node.updated_at = now
        await session.flush()
        after = ProductRead.with_apis(node, apis)
        summary = f"updated API product {node.title}"
        await _audit(caller, session, PRODUCT, "update", node, summary, before, after)
    return after


async def delete_product(*, session: AsyncSession, caller: SiteCaller, node_id: uuid.UUID) -> None:
    """Disassociate its APIs, run its deletion hooks (the subscriptions' revocation), then
    delete the node: the order of the transition table."""
    repository = CatalogueRepository(session)
    node = await _node(repository, PRODUCT, node_id, lock=True)
    before = await _product_read(repository, node)
    await repository.remove_product_apis(node.id)
    await hooks.before_delete(session, node, f"the API product '{node.title}' was deleted")
    await repository.delete(node)
    summary = f"deleted API product {node.title}"
    await _audit(caller, session, PRODUCT, "delete", node, summary, before)


# ------------------------------------------------------------------------------------- filters


def filters(raw: Mapping[str, str]) -> NodeFilters:
    """The list filters, each value checked; refusals name ``filter[<name>]``."""
    values = FilterValues(raw)
    source_type, connection_id = node_filters.source(values)
    found = NodeFilters(
        source_type=source_type,
        connection_id=connection_id,
        moderation_state=values.choice("moderation_state", ModerationState),
        visibility=values.choice("visibility", Visibility),
        organisation_id=values.identifier("organisation", "an organisation's id (a UUID)"),
        published=values.boolean("published"),
        title=values.text("title"),
        search=values.text("search"),
    )
    values.check()
    return found


# ------------------------------------------------------------------------------------- helpers


async def _node(
    repository: CatalogueRepository, kind: _Kind, node_id: uuid.UUID, *, lock: bool = False
) -> CatalogueNode:
    """The node of the kind's bundle: an id of the other bundle names nothing here."""
    if lock:
        node = await repository.in_bundle_for_update(kind.bundle, node_id)
    else:
        node = await repository.in_bundle(kind.bundle, node_id)
    if node is None:
        raise kind.not_found()
    return node


async def _product_read(repository: CatalogueRepository, node: CatalogueNode) -> ProductRead:
    apis = await repository.product_apis([node.id])
    return ProductRead.with_apis(node, apis[node.id])


def _new_node(kind: _Kind, title: str, caller: SiteCaller, now: datetime) -> CatalogueNode:
    return CatalogueNode(
        id=uuid.uuid4(),
        bundle=kind.bundle,
        title=title,
        moderation_state=INITIAL,
        published=False,
        visibility=Visibility.INTERNAL,
        source_type=SourceType.CUSTOM,
        created_by=caller.user.id,
        created_at=now,
        updated_at=now,
    )


async def _bind(
    repository: CatalogueRepository,
    node: CatalogueNode,
    kind: _Kind,
    connection_id: uuid.UUID,
    remote_id: str | None,
) -> str:
    """Mark ``node`` imported from the connection; the connection's source type."""
    connection = await GatewayConnectionRepository(repository.session).get(connection_id)
    if connection is None:
        raise UnknownReference.at("/connection_id", f"no gateway connection has id {connection_id}")
    if remote_id is not None:
        taken = await repository.imported(connection_id, kind.bundle, remote_id)
        if taken is not None:
            raise RemoteIdTaken(
                f"connection {connection_id} already has {kind.label} node {taken.id} for "
                f"{kind.remote_field} '{remote_id}'"
            )
    node.source_type = SourceType.IMPORTED
    node.connection_id = connection_id
    node.remote_id = remote_id
    return connection.source


async def _check_organisation(
    repository: CatalogueRepository, organisation_id: uuid.UUID | None
) -> None:
    if organisation_id is not None and not await repository.organisation_exists(organisation_id):
        raise UnknownReference.at(
            "/organisation", f"no portal organisation has id {organisation_id}"
        )


async def _check_apis(repository: CatalogueRepository, api_ids: list[uuid.UUID]) -> None:
    found = await repository.api_ids(api_ids)
    missing = [
        {"pointer": f"/associated_apis/{index}", "detail": f"no API node has id {api_id}"}
        for index, api_id in enumerate(api_ids)
        if api_id not in found
    ]
    if missing:
        raise UnknownReference(missing)


async def _document(raw: dict[str, Any] | str) -> dict[str, Any]:
    """The OpenAPI document as the object to store, or a refusal naming ``documentation``.
    Read as the ``openapi`` connector reads what it fetches; CPU-bound (YAML near 5 MiB
    takes seconds), so off the event loop."""
    text = isinstance(raw, str)
    where = (
        "not an OpenAPI 3.0/3.1 document in JSON or YAML"
        if text
        else ("not an OpenAPI 3.0/3.1 document")
    )
    try:
        document = await asyncio.to_thread(parse_document, raw)
    except ValidationFailed as refused:
        raise ValidationFailed.at("/documentation", f"{where}: {refused.detail}") from None
    problem = document_problem(document)
    if problem is not None:
        raise ValidationFailed.at("/documentation", f"{where}: {problem}")
    return document


def _changed(before: ApiRead | ProductRead, after: ApiRead | ProductRead) -> bool:
    return before.model_dump(exclude={"updated_at"}) != after.model_dump(exclude={"updated_at"})


def _mapped(page: Page[Any], items: list[T]) -> Page[T]:
    return Page(items=items, page=page.page, size=page.size, total=page.total)


def _snapshot(read: ApiRead | ProductRead | None) -> dict[str, Any] | None:
    """The read shape, but an OpenAPI document (up to 5 MiB, twice per change) stands in the
    audit log as what identifies it: its title and versions and the digest of its content."""
    if read is None:
        return None
    out = read.model_dump(mode="json")
    document = out.get("documentation")
    if isinstance(document, dict):
        info = document.get("info")
        info = info if isinstance(info, dict) else {}
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
        out["documentation"] = {
            "openapi": document.get("openapi"),
            "title": info.get("title"),
            "version": info.get("version"),
            "sha256": hashlib.sha256(canonical.encode()).hexdigest(),
        }
    return out


async def _audit(
    caller: SiteCaller,
    session: AsyncSession,
    kind: _Kind,
    verb: str,
    node: CatalogueNode,
    summary: str,
    before: ApiRead | ProductRead | None = None,
    after: ApiRead | ProductRead | None = None,
) -> None:
    await caller.audit(
        session,
        f"{kind.operation}.{verb}",
        entity_type=ENTITY,
        entity_id=node.id,
        module=MODULE,
        bundle=kind.bundle.value,
        summary=summary,
        before=_snapshot(before),
        after=_snapshot(after),
    )
