"""The products deployed in an environment, as its snapshot carries them (kept apart from
the service: the snapshot builder, ``deployment.snapshot``, needs only this of products)."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from portico.gateway.snapshot import SnapshotProduct, SnapshotQuota
from portico.management.product.repository import ProductRepository


async def deployed_products(
    session: AsyncSession, environment_id: uuid.UUID
) -> list[SnapshotProduct]:
    """Ordered by name; a product's quota as stored (None: no quota, traffic refused)."""
    rows = await ProductRepository(session).deployed_by_name(environment_id)
    return [
        SnapshotProduct(
            id=str(product.id),
            name=product.name,
            api_ids=sorted(set(product.api_ids or [])),
            quota=SnapshotQuota.model_validate(product.quota) if product.quota else None,
        )
        for product in rows
    ]
