from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.environment.service import EnvironmentNotFound
from portico.management.pages import PageRead, page_of
from portico.management.product import service as product_service
from portico.management.product.schemas import (
    ProductCreate,
    ProductDeploymentRead,
    ProductRead,
    ProductUpdate,
)
from portico.management.product.service import ProductNotFound

router = APIRouter(prefix="/api/orgs/{orgId}/products", tags=["products"])
env_router = APIRouter(prefix="/api/orgs/{orgId}/envs/{envId}/products", tags=["products"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt", "updatedAt"}),
    default_sort="name",
    filterable=frozenset({"name"}),
)
Reader = Annotated[OrgCaller, Depends(require("product.read"))]
Manager = Annotated[OrgCaller, Depends(require("product.manage"))]


@router.get("", response_model=PageRead[ProductRead])
async def list_products(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[ProductRead]:
    page = await product_service.list_(session=session, caller=caller, query=query)
    return page_of(page, ProductRead)


@router.post(
    "",
    response_model=ProductRead,
    status_code=201,
    responses=problems(Conflict, detail="A product with this name already exists."),
)
async def create_product(body: ProductCreate, caller: Manager, session: SessionDep) -> ProductRead:
    product = await product_service.create(session=session, caller=caller, data=body)
    return ProductRead.model_validate(product)


@router.get("/{productId}", response_model=ProductRead)
async def get_product(productId: str, caller: Reader, session: SessionDep) -> ProductRead:
    product = await product_service.get(
        session=session, caller=caller, product_id=parse_id(productId, ProductNotFound)
    )
    return ProductRead.model_validate(product)


@router.patch(
    "/{productId}",
    response_model=ProductRead,
    responses=problems(Conflict, detail="A product with this name already exists."),
)
async def update_product(
    productId: str, body: ProductUpdate, caller: Manager, session: SessionDep
) -> ProductRead:
    """Any subset of the fields; ``quota: null`` removes the quota."""
    product = await product_service.update(
        session=session,
        caller=caller,
        product_id=parse_id(productId, ProductNotFound),
        data=body,
    )
    return ProductRead.model_validate(product)


@router.delete(
    "/{productId}",
    status_code=204,
    responses=problems(
        Conflict, detail="Apps subscribe to the product (and force was not asked for)."
    ),
)
async def delete_product(
    productId: str,
    caller: Manager,
    session: SessionDep,
    force: Annotated[
        bool,
        Query(
            description="Delete it even though apps subscribe to it: their subscriptions to "
            "it are removed (otherwise 409)."
        ),
    ] = False,
) -> Response:
    await product_service.delete(
        session=session,
        caller=caller,
        product_id=parse_id(productId, ProductNotFound),
        force=force,
    )
    return Response(status_code=204)


@env_router.get("", response_model=PageRead[ProductRead])
async def list_deployed_products(
    envId: str, caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[ProductRead]:
    """The products deployed in the environment."""
    page = await product_service.list_deployed(
        session=session,
        caller=caller,
        env_id=parse_id(envId, EnvironmentNotFound),
        query=query,
    )
    return page_of(page, ProductRead)


@env_router.post("/{productId}/deploy", response_model=ProductDeploymentRead)
async def deploy_product(
    envId: str, productId: str, caller: Manager, session: SessionDep
) -> ProductDeploymentRead:
    """200 with the deployment; idempotent: deploying a deployed product changes nothing
    and answers the same ``deployedAt``."""
    deployment = await product_service.deploy(
        session=session,
        caller=caller,
        env_id=parse_id(envId, EnvironmentNotFound),
        product_id=parse_id(productId, ProductNotFound),
    )
    return ProductDeploymentRead.model_validate(deployment)


@env_router.delete("/{productId}/deploy", status_code=204)
async def undeploy_product(
    envId: str, productId: str, caller: Manager, session: SessionDep
) -> Response:
    """404 when the product is not deployed in the environment."""
    await product_service.undeploy(
        session=session,
        caller=caller,
        env_id=parse_id(envId, EnvironmentNotFound),
        product_id=parse_id(productId, ProductNotFound),
    )
    return Response(status_code=204)
