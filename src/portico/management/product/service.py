"""Products: create, read, change, delete, deploy to and undeploy from environments; every
change audited. A product acts in an environment only once deployed there, so a change that
alters what gateways enforce (deploy, undeploy, a deployed product's name, APIs or quota, a
deployed or subscribed product's deletion) publishes each environment concerned."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import utcnow
from portico.core.errors import Conflict, NotFound, ValidationFailed
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller
from portico.management.environment import service as environment_service
from portico.management.environment.ports import publish
from portico.management.environment.repository import EnvironmentRepository
from portico.management.product import ports
from portico.management.product.models import Product, ProductDeployment
from portico.management.product.repository import ProductRepository
from portico.management.product.schemas import (
    ProductCreate,
    ProductDeploymentRead,
    ProductRead,
    ProductUpdate,
)


class ProductNotFound(NotFound):
    default_detail = "product not found"


class ProductNotDeployed(NotFound):
    default_detail = "product is not deployed in this environment"


@dataclass(frozen=True)
class ProductView:
    """A product as read: its row and the environments it is deployed in."""

    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    display_name: str
    description: str
    api_ids: list[str]
    quota: dict[str, Any] | None
    environments: list[uuid.UUID]
    created_at: datetime
    updated_at: datetime


def view_of(product: Product, environments: list[uuid.UUID]) -> ProductView:
    return ProductView(
        id=product.id,
        org_id=product.org_id,
        name=product.name,
        display_name=product.display_name,
        description=product.description,
        api_ids=list(product.api_ids or []),
        quota=dict(product.quota) if product.quota is not None else None,
        environments=environments,
        created_at=product.created_at,
        updated_at=product.updated_at,
    )


def snapshot(view: ProductView) -> dict[str, Any]:
    return ProductRead.model_validate(view).model_dump(mode="json")


async def _get(repository: ProductRepository, caller: OrgCaller, product_id: uuid.UUID) -> Product:
    product = await repository.get_in_org(caller.org_id, product_id)
    if product is None:
        raise ProductNotFound()
    return product


async def _view(repository: ProductRepository, product: Product) -> ProductView:
    environments = await repository.environment_ids([product.id])
    return view_of(product, environments[product.id])


async def get(*, session: AsyncSession, caller: OrgCaller, product_id: uuid.UUID) -> ProductView:
    repository = ProductRepository(session)
    return await _view(repository, await _get(repository, caller, product_id))


async def list_(*, session: AsyncSession, caller: OrgCaller, query: ListQuery) -> Page[ProductView]:
    repository = ProductRepository(session)
    return await _page(repository, await repository.page_in_org(caller.org_id, query))


async def list_deployed(
    *, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID, query: ListQuery
) -> Page[ProductView]:
    """The products deployed in one environment of the org."""
    env = await environment_service.get(session=session, caller=caller, env_id=env_id)
    repository = ProductRepository(session)
    within = repository.deployed_in(env.id)
    return await _page(
        repository, await repository.page_in_org(caller.org_id, query, within=within)
    )


async def _page(repository: ProductRepository, page: Page[Product]) -> Page[ProductView]:
    environments = await repository.environment_ids(p.id for p in page.items)
    items = [view_of(p, environments[p.id]) for p in page.items]
    return Page(items=items, page=page.page, size=page.size, total=page.total)


async def create(*, session: AsyncSession, caller: OrgCaller, data: ProductCreate) -> ProductView:
    repository = ProductRepository(session)
    api_ids = await _checked_api_ids(repository, caller, data.api_ids)
    if await repository.name_taken(caller.org_id, data.name):
        raise Conflict(f"a product named '{data.name}' already exists")
    product = Product(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        name=data.name,
        display_name=data.display_name if data.display_name is not None else data.name,
        description=data.description,
        api_ids=api_ids,
        quota=data.quota.model_dump() if data.quota is not None else None,
    )
    await repository.add(product)
    view = view_of(product, [])
    await caller.audit(session, "product.create", product.id, after=snapshot(view))
    return view


async def update(
    *, session: AsyncSession, caller: OrgCaller, product_id: uuid.UUID, data: ProductUpdate
) -> ProductView:
    repository = ProductRepository(session)
    product = await _get(repository, caller, product_id)
    before = await _view(repository, product)
    api_ids = (
        await _checked_api_ids(repository, caller, data.api_ids)
        if data.api_ids is not None
        else None
    )
    if data.name is not None and await repository.name_taken(
        caller.org_id, data.name, except_id=product.id
    ):
        raise Conflict(f"a product named '{data.name}' already exists")
    if data.name is not None:
        product.name = data.name
    if data.display_name is not None:
        product.display_name = data.display_name
    if data.description is not None:
        product.description = data.description
    if api_ids is not None:
        product.api_ids = api_ids
    if "quota" in data.model_fields_set:  # null: the quota is removed
        product.quota = data.quota.model_dump() if data.quota is not None else None
    elif data.quota_key_scope is not None:  # the seed's field alone: the stored quota's scope
        if product.quota is None:
            raise ValidationFailed.at("/quota_key_scope", "$.quota_key_scope: needs a quota")
        product.quota = {**product.quota, "key_scope": data.quota_key_scope}
    await session.flush()
    await session.refresh(product)
    after = view_of(product, before.environments)
    enforced = (before.name, before.api_ids, before.quota)
    if (after.name, after.api_ids, after.quota) != enforced:  # what gateways hold of it
        await _publish(repository, before.environments, f"product {product.name} changed")
    await caller.audit(
        session, "product.update", product.id, before=snapshot(before), after=snapshot(after)
    )
    return after


async def delete(
    *, session: AsyncSession, caller: OrgCaller, product_id: uuid.UUID, force: bool
) -> None:
    """Refused while apps subscribe to it, unless ``force``: then their subscriptions go
    with it, and the environments of those apps are published too."""
    repository = ProductRepository(session)
    product = await _get(repository, caller, product_id)
    subscribers = await ports.subscriber_count(session, product.id)
    if subscribers and not force:
        raise Conflict(f"product is used by {_apps(subscribers)}")
    before = await _view(repository, product)
    affected = set(before.environments)
    if subscribers:
        affected |= await ports.subscriber_environment_ids(session, product.id)
        await ports.remove_subscriptions(session, product.id)
    await repository.remove_deployments(product.id)
    await repository.delete(product)
    await _publish(repository, affected, f"product {before.name} deleted")
    await caller.audit(
        session,
        "product.delete",
        product_id,
        before=snapshot(before),
        summary=f"forced: unsubscribed {_apps(subscribers)}" if subscribers else "",
    )


async def deploy(
    *, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID, product_id: uuid.UUID
) -> ProductDeployment:
    """Idempotent: deploying a deployed product changes nothing (same ``deployedAt``)."""
    env = await environment_service.get(session=session, caller=caller, env_id=env_id)
    repository = ProductRepository(session)
    product = await _get(repository, caller, product_id)
    # two concurrent deploys of one product: the second waits, then finds the first's row
    await EnvironmentRepository(session).lock(env.id)
    existing = await repository.deployment(product.id, env.id)
    if existing is not None:
        return existing
    deployment = ProductDeployment(
        product_id=product.id, environment_id=env.id, deployed_at=utcnow()
    )
    await repository.add_deployment(deployment)
    await publish(session, env, f"product {product.name} deployed")
    await caller.audit(
        session,
        "product.deploy",
        product.id,
        after=ProductDeploymentRead.model_validate(deployment).model_dump(mode="json"),
        summary=f"deployed to environment {env.name}",
    )
    return deployment


async def undeploy(
    *, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID, product_id: uuid.UUID
) -> None:
    env = await environment_service.get(session=session, caller=caller, env_id=env_id)
    repository = ProductRepository(session)
    product = await _get(repository, caller, product_id)
    await EnvironmentRepository(session).lock(env.id)
    deployment = await repository.deployment(product.id, env.id)
    if deployment is None:
        raise ProductNotDeployed()
    before = ProductDeploymentRead.model_validate(deployment).model_dump(mode="json")
    await repository.remove_deployment(deployment)
    await publish(session, env, f"product {product.name} undeployed")
    await caller.audit(
        session,
        "product.undeploy",
        product.id,
        before=before,
        summary=f"undeployed from environment {env.name}",
    )


async def _checked_api_ids(
    repository: ProductRepository, caller: OrgCaller, api_ids: list[uuid.UUID]
) -> list[str]:
    """The ids as stored (strings, in the order sent); a repeated id, or one that names no
    API of the org, is a 400 at ``/apiIds/<i>``."""
    known = await repository.api_ids_in_org(caller.org_id, api_ids)
    errors: list[dict[str, str]] = []
    seen: set[uuid.UUID] = set()
    for index, api_id in enumerate(api_ids):
        if api_id in seen:
            errors.append({"pointer": f"/apiIds/{index}", "detail": f"api {api_id} given twice"})
        elif api_id not in known:
            errors.append(
                {"pointer": f"/apiIds/{index}", "detail": f"no api with id {api_id} in this org"}
            )
        seen.add(api_id)
    if errors:
        raise ValidationFailed(errors)
    return [str(api_id) for api_id in api_ids]


def _apps(count: int) -> str:
    return "1 app" if count == 1 else f"{count} apps"


async def _publish(
    repository: ProductRepository, env_ids: Iterable[uuid.UUID], reason: str
) -> None:
    # in id order, so that two transactions lock the same environments in the same order
    environments = await EnvironmentRepository(repository.session).by_ids(set(env_ids))
    for env in environments:
        await publish(repository.session, env, reason)
