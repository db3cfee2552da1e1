from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import Select, delete, select

from portico.core.db.repository import OrgScopedRepository
from portico.management.api.models import Api
from portico.management.product.models import Product, ProductDeployment


class ProductRepository(OrgScopedRepository[Product]):
    model = Product
    sort_columns = {
        "name": Product.name,
        "createdAt": Product.created_at,
        "updatedAt": Product.updated_at,
    }
    filter_columns = {"name": Product.name}

    def deployed_in(self, env_id: uuid.UUID) -> Select[Product]:
        return select(Product).where(
            Product.id.in_(
                select(ProductDeployment.product_id).where(
                    ProductDeployment.environment_id == env_id
                )
            )
        )

    async def deployed_by_name(self, env_id: uuid.UUID) -> list[Product]:
        """The products deployed in the environment, by name (then id)."""
        return await self.all(
            select(Product)
            .join(ProductDeployment, ProductDeployment.product_id == Product.id)
            .where(ProductDeployment.environment_id == env_id)
            .order_by(Product.name, Product.id)
        )

    async def api_ids_in_org(self, org_id: uuid.UUID, ids: Iterable[uuid.UUID]) -> set[uuid.UUID]:
        """Those of ``ids`` that name an API of the org."""
        wanted = list(ids)
        if not wanted:
            return set()
        rows = await self.session.scalars(
            select(Api.id).where(Api.org_id == org_id, Api.id.in_(wanted))
        )
        return set(rows)

    async def environment_ids(
        self, product_ids: Iterable[uuid.UUID]
    ) -> dict[uuid.UUID, list[uuid.UUID]]:
        """Product id → ids of the environments it is deployed in, in id order."""
        wanted = list(product_ids)
        out: dict[uuid.UUID, list[uuid.UUID]] = {p: [] for p in wanted}
        if not wanted:
            return out
        rows = await self.session.execute(
            select(ProductDeployment.product_id, ProductDeployment.environment_id)
            .where(ProductDeployment.product_id.in_(wanted))
            .order_by(ProductDeployment.environment_id)
        )
        for product_id, env_id in rows:
            out[product_id].append(env_id)
        return out

    async def deployment(
        self, product_id: uuid.UUID, env_id: uuid.UUID
    ) -> ProductDeployment | None:
        deployment: ProductDeployment | None = await self.session.get(
            ProductDeployment, (product_id, env_id)
        )
        return deployment

    async def add_deployment(self, deployment: ProductDeployment) -> None:
        self.session.add(deployment)
        await self.session.flush()

    async def remove_deployment(self, deployment: ProductDeployment) -> None:
        await self.session.delete(deployment)
        await self.session.flush()

    async def remove_deployments(self, product_id: uuid.UUID) -> None:
        await self.session.execute(
            delete(ProductDeployment).where(ProductDeployment.product_id == product_id)
        )
