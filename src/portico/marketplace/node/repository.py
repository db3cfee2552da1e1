"""Reading and locking catalogue nodes, and a product's APIs; the catalogue, content,
publishing and import services build their own queries on top."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import ColumnElement, delete, func, insert, select
from sqlalchemy.orm import InstrumentedAttribute

from portico.core.db.repository import Repository
from portico.marketplace.node.counts import FACET_COUNTS, NO_STATE
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    ProductApi,
    SourceType,
    Visibility,
)


def newest_for_node(
    row_id: InstrumentedAttribute[Any],
    node_id: InstrumentedAttribute[Any],
    at: InstrumentedAttribute[Any],
) -> Any:
    """The id of a node's newest row in a per-node history (governance runs, health
    checks): a subquery correlated with ``CatalogueNode``, newest by ``at`` then id, to join
    each node of a page with its latest record."""
    return (
        select(row_id)
        .where(node_id == CatalogueNode.id)
        .order_by(at.desc(), row_id.desc())
        .limit(1)
        .correlate(CatalogueNode)
        .scalar_subquery()
    )


class NodeRepository(Repository[CatalogueNode]):
    model = CatalogueNode

    async def facet_count(
        self,
        bundle: Bundle,
        *,
        source_type: SourceType | None = None,
        moderation_state: ModerationState | None = None,
        visibility: Visibility | None = None,
        published: bool | None = None,
    ) -> int:
        """The number of the bundle's nodes with the given values (None: any), from the
        counts the triggers keep (node/counts.py), as the nodes' own conditions would count
        them; ``published`` is the moderation state's (catalogue/repository.py)."""
        c = FACET_COUNTS.c
        conditions: list[ColumnElement[bool]] = [c.bundle == bundle.value]
        if source_type is not None:
            conditions.append(c.source_type == source_type.value)
        if moderation_state is not None:
            conditions.append(c.moderation_state == moderation_state.value)
        if visibility is not None:
            conditions.append(c.visibility == visibility.value)
        if published is True:
            conditions.append(c.moderation_state == ModerationState.PUBLISHED.value)
        elif published is False:
            # `moderation_state != 'published'` on the nodes is not true of a NULL state
            unpublished = [ModerationState.PUBLISHED.value, NO_STATE]
            conditions.append(c.moderation_state.not_in(unpublished))
        counted = await self.session.scalar(select(func.sum(c.nodes)).where(*conditions))
        return int(counted or 0)

    async def in_bundle(self, bundle: Bundle, node_id: uuid.UUID) -> CatalogueNode | None:
        return await self.first(
            select(CatalogueNode).where(CatalogueNode.id == node_id, CatalogueNode.bundle == bundle)
        )

    async def in_bundle_for_update(
        self, bundle: Bundle, node_id: uuid.UUID
    ) -> CatalogueNode | None:
        """The node, locked until the transaction ends (PostgreSQL; SQLite's writer lock is
        taken by the first write), re-read so that a concurrent change is seen."""
        return await self.first(
            select(CatalogueNode)
            .where(CatalogueNode.id == node_id, CatalogueNode.bundle == bundle)
            .with_for_update()
            .execution_options(populate_existing=True)
        )

    async def many(self, node_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, CatalogueNode]:
        """Those of ``node_ids`` that exist, by id."""
        if not node_ids:
            return {}
        rows = await self.all(select(CatalogueNode).where(CatalogueNode.id.in_(list(node_ids))))
        return {row.id: row for row in rows}

    async def imported(
        self, connection_id: uuid.UUID, bundle: Bundle, remote_id: str
    ) -> CatalogueNode | None:
        """The node a remote API or product of a connection was imported as."""
        return await self.first(
            select(CatalogueNode).where(
                CatalogueNode.connection_id == connection_id,
                CatalogueNode.bundle == bundle,
                CatalogueNode.remote_id == remote_id,
            )
        )

    async def product_apis(
        self, product_ids: Collection[uuid.UUID]
    ) -> dict[uuid.UUID, list[uuid.UUID]]:
        """Each product's API ids, in the product's order (every product asked is a key)."""
        out: dict[uuid.UUID, list[uuid.UUID]] = {p: [] for p in product_ids}
        if not out:
            return out
        rows = await self.session.execute(
            select(ProductApi.product_id, ProductApi.api_id)
            .where(ProductApi.product_id.in_(list(out)))
            .order_by(ProductApi.product_id, ProductApi.position)
        )
        for product_id, api_id in rows:
            out[product_id].append(api_id)
        return out

    async def set_product_apis(self, product_id: uuid.UUID, api_ids: Sequence[uuid.UUID]) -> None:
        """Replace the product's APIs with ``api_ids``, in that order."""
        await self.remove_product_apis(product_id)
        if api_ids:
            await self.session.execute(
                insert(ProductApi),
                [
                    {"product_id": product_id, "api_id": api_id, "position": position}
                    for position, api_id in enumerate(api_ids)
                ],
            )

    async def remove_product_apis(self, product_id: uuid.UUID) -> None:
        await self.session.execute(delete(ProductApi).where(ProductApi.product_id == product_id))
