"""Writing what was read from a remote side as catalogue nodes, audited.

A remote API or product is one node per connection, found by (connection, bundle, remote
id) and updated in place when imported again (title, version, overview or description,
documentation or quota, the remote revision, ``updated_at``); otherwise created as an
imported draft that the portal does not show (``published`` false) until it goes through
the editorial workflow. Moderation state, visibility and organisation are the portal's:
an import never changes them. Everything an import writes goes in the caller's
transaction, with its audit entry (module ``gateway_sync``).

Remote values are untrusted: texts lose any NUL (PostgreSQL cannot hold it) and are cut to
their column's length; an id longer than its column is refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.audit import Actor
from portico.core.schema import find_nul
from portico.marketplace import SURFACE
from portico.marketplace.catalogue.schemas import ApiListItem, ProductRead
from portico.marketplace.connectors.base import RemoteApiDetail, RemoteProduct
from portico.marketplace.imports.problems import RemoteFailed
from portico.marketplace.imports.repository import ImportRepository
from portico.marketplace.node import hooks
from portico.marketplace.node.models import Bundle, CatalogueNode, SourceType
from portico.marketplace.node.moderation import INITIAL
from portico.marketplace.node.repository import NodeRepository

MODULE = "gateway_sync"
_ID_LENGTH = 255


@dataclass(frozen=True)
class Written:
    node: CatalogueNode
    created: bool


@dataclass(frozen=True)
class Origin:
    """Where a write comes from: the connection, who asked, and how (for the summary)."""

    connection_id: uuid.UUID
    connection_name: str
    source: str
    actor: Actor
    now: datetime
    #: e.g. "in job <id>"; empty for a request
    context: str = ""


async def write_api(
    session: AsyncSession,
    origin: Origin,
    api: RemoteApiDetail,
    *,
    known: Mapping[str, CatalogueNode] | None = None,
) -> Written:
    """``known``: the nodes already imported among a batch's (read together by the caller,
    :func:`known_apis`); without it the node is looked for."""
    _check_id(origin, "API", api.api_id)
    # the document was read by core.openapi_document (connectors/base.py): no NUL in it
    fields: dict[str, Any] = {
        "title": _text(api.title, 255) or api.api_id[:255],
        "version": _text(api.version, 64),
        "overview": _text(api.overview),
        "documentation": api.documentation,
        "remote_uuid": _text(api.uuid, 64) if api.uuid is not None else None,
        "remote_revision": _text(api.revision, 64) if api.revision is not None else None,
    }
    written, before = await _upsert(session, origin, Bundle.APIS, api.api_id, fields, known)
    # a new revision of a published API is linted again (node/hooks.py, governance)
    await hooks.after_imported(session, written.node, origin.actor.id)
    verb = "created" if written.created else "updated"
    revision = f" at revision {api.revision}" if api.revision is not None else ""
    await _audit(
        session,
        origin,
        "api.import",
        written.node,
        summary=f"imported API {written.node.title}{revision} from gateway connection "
        f"{origin.connection_name}: node {verb}",
        before=before,
        after=ApiListItem.of(written.node).model_dump(mode="json"),
    )
    return written


async def write_product(
    session: AsyncSession,
    origin: Origin,
    product: RemoteProduct,
    api_nodes: Sequence[uuid.UUID],
) -> Written:
    """The product's node, its APIs exactly ``api_nodes`` (in that order, each once)."""
    _check_id(origin, "product", product.product_id)
    if product.quota is not None and find_nul(product.quota) is not None:
        raise RemoteFailed(
            f"{_label(origin)}: the quota of product {product.product_id!r} holds NUL "
            "characters, which cannot be stored"
        )
    fields: dict[str, Any] = {
        "title": _text(product.title, 255) or product.product_id[:255],
        "description": _text(product.description),
        "quota": product.quota,
        "gateway_type": origin.source,
        "remote_uuid": _text(product.uuid, 64) if product.uuid is not None else None,
    }
    repository = ImportRepository(session)
    written, before = await _upsert(
        session, origin, Bundle.API_PRODUCTS, product.product_id, fields, None
    )
    if before is not None:
        previous = await repository.product_apis([written.node.id])
        before = {**before, "apis": [str(a) for a in previous[written.node.id]]}
    ordered = list(dict.fromkeys(api_nodes))
    await repository.set_product_apis(written.node.id, ordered)
    verb = "created" if written.created else "updated"
    await _audit(
        session,
        origin,
        "product.import",
        written.node,
        summary=f"imported product {written.node.title} ({len(ordered)} APIs) from gateway "
        f"connection {origin.connection_name}: node {verb}",
        before=before,
        after=ProductRead.with_apis(written.node, ordered).model_dump(mode="json"),
    )
    return written


async def known_apis(
    session: AsyncSession, origin: Origin, api_ids: Sequence[str]
) -> dict[str, CatalogueNode]:
    """The API nodes already imported for ``api_ids``, by api_id (one query for a batch)."""
    return await ImportRepository(session).nodes(origin.connection_id, Bundle.APIS, api_ids)


async def _upsert(
    session: AsyncSession,
    origin: Origin,
    bundle: Bundle,
    remote_id: str,
    fields: dict[str, Any],
    known: Mapping[str, CatalogueNode] | None,
) -> tuple[Written, dict[str, Any] | None]:
    """The node updated in place (with its snapshot before), or created."""
    nodes = NodeRepository(session)
    if known is not None:
        node = known.get(remote_id)
    else:
        node = await nodes.imported(origin.connection_id, bundle, remote_id)
    if node is None:
        node = CatalogueNode(
            id=uuid.uuid4(),
            bundle=bundle,
            moderation_state=INITIAL,
            published=False,
            source_type=SourceType.IMPORTED,
            connection_id=origin.connection_id,
            remote_id=remote_id,
            created_by=origin.actor.id,
            created_at=origin.now,
            updated_at=origin.now,
            **fields,
        )
        try:
            # a savepoint: an import of the same remote id committed meanwhile (PostgreSQL;
            # SQLite's writers are serialised) makes this one an update, not a failure
            async with session.begin_nested():
                session.add(node)
        except IntegrityError:
            node = await nodes.imported(origin.connection_id, bundle, remote_id)
            if node is None:  # not the unique constraint: the connection is gone
                raise
        else:
            return Written(node, created=True), None
    before = _snapshot(node)
    for name, value in fields.items():
        setattr(node, name, value)
    node.updated_at = origin.now
    await session.flush()
    return Written(node, created=False), before


def _snapshot(node: CatalogueNode) -> dict[str, Any]:
    if node.bundle is Bundle.APIS:
        return ApiListItem.of(node).model_dump(mode="json")
    return ProductRead.with_apis(node, []).model_dump(mode="json", exclude={"associated_apis"})


async def _audit(
    session: AsyncSession,
    origin: Origin,
    operation: str,
    node: CatalogueNode,
    *,
    summary: str,
    before: dict[str, Any] | None,
    after: dict[str, Any],
) -> None:
    await audit.record(
        session,
        origin.actor,
        action=operation,
        entity_type="node",
        entity_id=node.id,
        before=before,
        after=after,
        summary=f"{summary} {origin.context}".rstrip(),
        surface=SURFACE,
        bundle=node.bundle.value,
        module=MODULE,
    )


def _check_id(origin: Origin, what: str, remote_id: str) -> None:
    if len(remote_id) > _ID_LENGTH or "\x00" in remote_id:
        raise RemoteFailed(
            f"{_label(origin)}: the id of a remote {what} is longer than {_ID_LENGTH} "
            "characters or holds NUL; it cannot be stored"
        )


def _text(value: str, limit: int | None = None) -> str:
    cleaned = value.replace("\x00", "")
    return cleaned[:limit] if limit is not None else cleaned


def _label(origin: Origin) -> str:
    return f"gateway connection '{origin.connection_name}' ({origin.connection_id})"
