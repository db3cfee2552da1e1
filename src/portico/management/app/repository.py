"""Queries of apps, their product subscriptions, and what gateways need of them."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import Select, delete, func, select

from portico.core.db.repository import OrgScopedRepository
from portico.management.app.models import App, AppProduct, AppStatus
from portico.management.consumer.models import Consumer
from portico.management.developer.models import Developer, DeveloperStatus
from portico.management.product.models import Product


class AppRepository(OrgScopedRepository[App]):
    model = App
    sort_columns = {"name": App.name, "createdAt": App.created_at, "updatedAt": App.updated_at}

    def of_developer(self, developer_id: uuid.UUID, environment_id: uuid.UUID) -> Select[App]:
        return select(App).where(
            App.developer_id == developer_id, App.environment_id == environment_id
        )

    async def name_taken_by_developer(
        self,
        developer_id: uuid.UUID,
        environment_id: uuid.UUID,
        name: str,
        *,
        except_id: uuid.UUID | None = None,
    ) -> bool:
        """App names are unique per developer and environment."""
        statement = self.of_developer(developer_id, environment_id).where(App.name == name)
        if except_id is not None:
            statement = statement.where(App.id != except_id)
        return await self.first(statement) is not None

    async def delete_with_consumers(self, apps: list[App]) -> None:
        """The apps, their subscriptions, then the consumers they owned (apps refer to their
        consumer with RESTRICT: the apps go first)."""
        if not apps:
            return
        app_ids = [a.id for a in apps]
        consumer_ids = [a.consumer_id for a in apps]
        await self.session.execute(delete(AppProduct).where(AppProduct.app_id.in_(app_ids)))
        for app in apps:
            await self.session.delete(app)
        await self.session.flush()
        await self.session.execute(delete(Consumer).where(Consumer.id.in_(consumer_ids)))

    async def owner_of_consumer(self, consumer_id: uuid.UUID) -> App | None:
        return await self.first(select(App).where(App.consumer_id == consumer_id))

    async def products_of(self, app_id: uuid.UUID) -> dict[uuid.UUID, int]:
        rows = await self.session.execute(
            select(AppProduct.product_id, AppProduct.rank).where(AppProduct.app_id == app_id)
        )
        return {product_id: rank for product_id, rank in rows}

    async def set_products(self, app_id: uuid.UUID, ranks: dict[uuid.UUID, int]) -> None:
        await self.session.execute(delete(AppProduct).where(AppProduct.app_id == app_id))
        self.session.add_all(
            AppProduct(app_id=app_id, product_id=product_id, rank=rank)
            for product_id, rank in ranks.items()
        )
        await self.session.flush()

    async def products_in_org(
        self, org_id: uuid.UUID, product_ids: Iterable[uuid.UUID]
    ) -> set[uuid.UUID]:
        """Which of ``product_ids`` are products of the org."""
        wanted = list(product_ids)
        if not wanted:
            return set()
        found = await self.session.scalars(
            select(Product.id).where(Product.org_id == org_id, Product.id.in_(wanted))
        )
        return set(found)

    async def developer_in_org(
        self, org_id: uuid.UUID, developer_id: uuid.UUID
    ) -> Developer | None:
        return await self.session.scalar(
            select(Developer).where(Developer.org_id == org_id, Developer.id == developer_id)
        )

    async def count_of_developer(self, developer_id: uuid.UUID) -> int:
        return int(
            await self.session.scalar(
                select(func.count()).select_from(App).where(App.developer_id == developer_id)
            )
            or 0
        )

    async def serving(self, org_id: uuid.UUID) -> list[tuple[App, Developer]]:
        """Every app of the org whose credentials gateways accept (the app active, its
        developer active), with its developer."""
        rows = await self.session.execute(
            select(App, Developer)
            .join(Developer, Developer.id == App.developer_id)
            .where(
                App.org_id == org_id,
                App.status == AppStatus.ACTIVE,
                Developer.status == DeveloperStatus.ACTIVE,
            )
        )
        return [(app, developer) for app, developer in rows]

    async def ranked_products(self, app_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, list[str]]:
        """Each app's product ids, lowest rank first (ties by product name)."""
        wanted = list(app_ids)
        if not wanted:
            return {}
        rows = await self.session.execute(
            select(AppProduct.app_id, AppProduct.product_id)
            .join(Product, Product.id == AppProduct.product_id)
            .where(AppProduct.app_id.in_(wanted))
            .order_by(AppProduct.app_id, AppProduct.rank, Product.name)
        )
        out: dict[uuid.UUID, list[str]] = {}
        for app_id, product_id in rows:
            out.setdefault(app_id, []).append(str(product_id))
        return out

    async def all_app_consumer_ids(self, org_id: uuid.UUID) -> set[uuid.UUID]:
        return set(await self.session.scalars(select(App.consumer_id).where(App.org_id == org_id)))
