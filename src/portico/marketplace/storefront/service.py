"""The storefront: published APIs and products, as the caller may see them.

Who may see what is decided in the query (``repository.visible_to``), from the caller's
active memberships (``organisation.service.member_organisations``, one query per request).
A node the caller may not see answers exactly as a node that does not exist (404): its
existence is not disclosed. Read only: nothing here writes.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import NotFound
from portico.core.filter_values import FilterValues
from portico.core.pagination import ListQuery, Page
from portico.marketplace.catalogue.repository import NodeFilters
from portico.marketplace.node.models import Bundle, CatalogueNode
from portico.marketplace.organisation import service as organisation_service
from portico.marketplace.storefront.repository import ANONYMOUS, StorefrontRepository, Viewer
from portico.marketplace.storefront.schemas import PortalApi, PortalApiSummary, PortalProduct


class PortalApiNotFound(NotFound):
    default_detail = "API not found"


class PortalProductNotFound(NotFound):
    default_detail = "API product not found"


async def viewer(session: AsyncSession, user_id: uuid.UUID | None) -> Viewer:
    """Anonymous for None; otherwise the account's organisations and teams."""
    if user_id is None:
        return ANONYMOUS
    memberships = await organisation_service.member_organisations(session, user_id)
    return Viewer(
        signed_in=True,
        organisations={org: frozenset(teams) for org, teams in memberships.items()},
    )


def filters(raw: Mapping[str, str]) -> NodeFilters:
    """``filter[search]`` (in the title, ignoring ASCII case) and ``filter[organisation]``
    (the owning organisation's id); refusals name ``filter[<name>]``."""
    values = FilterValues(raw)
    found = NodeFilters(
        organisation_id=values.identifier("organisation", "an organisation's id (a UUID)"),
        search=values.text("search"),
    )
    values.check()
    return found


async def list_apis(
    *, session: AsyncSession, user_id: uuid.UUID | None, query: ListQuery
) -> Page[PortalApiSummary]:
    repository = StorefrontRepository(session, await viewer(session, user_id))
    page = await repository.page_of(Bundle.APIS, filters(query.filters), query, documentation=False)
    return Page(
        items=[PortalApiSummary.of(node) for node in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )


async def get_api(
    *, session: AsyncSession, user_id: uuid.UUID | None, node_id: uuid.UUID
) -> PortalApi:
    repository = StorefrontRepository(session, await viewer(session, user_id))
    node = await repository.visible(Bundle.APIS, node_id)
    if node is None:
        raise PortalApiNotFound()
    return PortalApi.of(node)


async def list_products(
    *, session: AsyncSession, user_id: uuid.UUID | None, query: ListQuery
) -> Page[PortalProduct]:
    repository = StorefrontRepository(session, await viewer(session, user_id))
    page = await repository.page_of(Bundle.API_PRODUCTS, filters(query.filters), query)
    return Page(
        items=await _products(repository, page.items),
        page=page.page,
        size=page.size,
        total=page.total,
    )


async def get_product(
    *, session: AsyncSession, user_id: uuid.UUID | None, node_id: uuid.UUID
) -> PortalProduct:
    repository = StorefrontRepository(session, await viewer(session, user_id))
    node = await repository.visible(Bundle.API_PRODUCTS, node_id)
    if node is None:
        raise PortalProductNotFound()
    [product] = await _products(repository, [node])
    return product


async def _products(
    repository: StorefrontRepository, nodes: list[CatalogueNode]
) -> list[PortalProduct]:
    """The products with the APIs of theirs the viewer may see: two queries for a page."""
    listed = await repository.product_apis([node.id for node in nodes])
    visible = await repository.visible_apis({a for apis in listed.values() for a in apis})
    return [
        PortalProduct.of(node, [visible[a] for a in listed[node.id] if a in visible])
        for node in nodes
    ]
