"""Queries of apps, their product subscriptions, and what gateways need of them."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import Select, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.repository import OrgScopedRepository
from portico.management.app.models import App, AppProduct, AppStatus
from portico.management.consumer import ports as consumer_ports
from portico.management.consumer.models import Consumer
from portico.management.consumer.ports import OwningApp
from portico.management.developer import ports as developer_ports
from portico.management.developer.models import Developer, DeveloperStatus
from portico.management.developer.ports import OwnedApp
from portico.management.product import ports as product_ports
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

    async def app_counts(self, developer_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, int]:
        """Developer id → how many apps they own (0 for none)."""
        wanted = list(developer_ids)
        counts = dict.fromkeys(wanted, 0)
        if not wanted:
            return counts
        rows = await self.session.execute(
            select(App.developer_id, func.count(App.id))
            .where(App.developer_id.in_(wanted))
            .group_by(App.developer_id)
        )
        for developer_id, count in rows:
            counts[developer_id] = int(count)
        return counts

    async def of_developer_by_id(self, developer_id: uuid.UUID) -> list[App]:
        return list(
            await self.session.scalars(
                select(App).where(App.developer_id == developer_id).order_by(App.id)
            )
        )

    async def app_environment_ids(self, developer_id: uuid.UUID) -> set[uuid.UUID]:
        rows = await self.session.scalars(
            select(App.environment_id).where(App.developer_id == developer_id).distinct()
        )
        return set(rows)

    async def subscriber_count(self, product_id: uuid.UUID) -> int:
        """How many apps subscribe to the product."""
        count = await self.session.scalar(
            select(func.count(func.distinct(AppProduct.app_id))).where(
                AppProduct.product_id == product_id
            )
        )
        return int(count or 0)

    async def subscriber_environment_ids(self, product_id: uuid.UUID) -> set[uuid.UUID]:
        """The environments of the apps that subscribe to the product."""
        rows = await self.session.scalars(
            select(App.environment_id)
            .join(AppProduct, AppProduct.app_id == App.id)
            .where(AppProduct.product_id == product_id)
            .distinct()
        )
        return set(rows)

    async def remove_subscriptions(self, product_id: uuid.UUID) -> None:
        await self.session.execute(delete(AppProduct).where(AppProduct.product_id == product_id))

    async def delete_apps_of(self, developer_id: uuid.UUID) -> list[OwnedApp]:
        """Delete the developer's apps with their subscriptions and the consumers they own."""
        apps = await self.of_developer_by_id(developer_id)
        owned = [OwnedApp(a.id, a.name, a.environment_id, a.developer_id) for a in apps]
        await self.delete_with_consumers(apps)
        return owned


@consumer_ports.owning_app.provide
async def _owning_app(session: AsyncSession, consumer_id: uuid.UUID) -> OwningApp | None:
    app = await AppRepository(session).owner_of_consumer(consumer_id)
    return None if app is None else OwningApp(app.id, app.name)


@developer_ports.app_counts.provide
async def _app_counts(
    session: AsyncSession, developer_ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, int]:
    return await AppRepository(session).app_counts(developer_ids)


@developer_ports.app_environment_ids.provide
async def _app_environment_ids(session: AsyncSession, developer_id: uuid.UUID) -> set[uuid.UUID]:
    return await AppRepository(session).app_environment_ids(developer_id)


@developer_ports.delete_apps.provide
async def _delete_apps(session: AsyncSession, developer_id: uuid.UUID) -> list[OwnedApp]:
    return await AppRepository(session).delete_apps_of(developer_id)


@product_ports.subscriber_count.provide
async def _subscriber_count(session: AsyncSession, product_id: uuid.UUID) -> int:
    return await AppRepository(session).subscriber_count(product_id)


@product_ports.subscriber_environment_ids.provide
async def _subscriber_environment_ids(
    session: AsyncSession, product_id: uuid.UUID
) -> set[uuid.UUID]:
    return await AppRepository(session).subscriber_environment_ids(product_id)


@product_ports.remove_subscriptions.provide
async def _remove_subscriptions(session: AsyncSession, product_id: uuid.UUID) -> None:
    await AppRepository(session).remove_subscriptions(product_id)
