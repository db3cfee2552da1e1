"""The products deployed in an environment, as its snapshot carries them (kept apart from
the service: the snapshot builder, ``deployment.snapshot``, needs only this of products)."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.gateway.snapshot import SnapshotProduct, SnapshotQuota
from portico.management.product.models import Product, ProductDeployment


async def deployed_products(
    session: AsyncSession, environment_id: uuid.UUID
) -> list[SnapshotProduct]:
    """Ordered by name; a product's quota as stored (None: no quota, traffic refused)."""
    rows = await session.scalars(
        select(Product)
        .join(ProductDeployment, ProductDeployment.product_id == Product.id)
        .where(ProductDeployment.environment_id == environment_id)
        .order_by(Product.name, Product.id)
    )
    return [
        SnapshotProduct(
            id=str(product.id),
            name=product.name,
            api_ids=sorted(set(product.api_ids or [])),
            quota=SnapshotQuota.model_validate(product.quota) if product.quota else None,
        )
        for product in rows
    ]
