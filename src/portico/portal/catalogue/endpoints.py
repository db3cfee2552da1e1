"""``GET /apis``, ``/apis/{node}``, ``/products``, ``/products/{node}``: published nodes
only, as the caller may see them (``marketplace.public``: the storefront). Anonymous
callers see public nodes; any signed-in account internal ones too; the active members of an
organisation in a node's audience (of the team, when the audience names one) its
organisation-visible ones. A node the caller may not see is 404, as one that does not
exist."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Depends, Request

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.errors import NotFound
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.public import (
    PortalApi,
    PortalApiNotFound,
    PortalApiSummary,
    PortalProduct,
    PortalProductNotFound,
    get_api,
    get_product,
    list_apis,
    list_products,
)
from portico.portal.access import OptionalDeveloperDep
from portico.portal.openapi import OPTIONAL_SECURITY

router = APIRouter()

LIST = ListSpec(
    sortable=frozenset({"title", "created_at", "updated_at"}),
    default_sort="title",
    filterable=frozenset({"search", "organisation"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "search": {
        "description": "Nodes whose title contains this text, ignoring the case of ASCII "
        "letters (A-Z and a-z; other letters match as written).",
    },
    "organisation": {
        "description": "Nodes owned by this portal organisation (its id).",
        "schema": {"type": "string", "format": "uuid"},
    },
}
LIST_HELP = (
    " Filters: `filter[search]` (in the title, ignoring ASCII case), `filter[organisation]` "
    "(the owner's id). Sorts: title (default), created_at, updated_at; ties by id."
)
OPEN = {"security": OPTIONAL_SECURITY}
LISTED = {**OPEN, "parameters": LIST.openapi_parameters(FILTER_PARAMETERS)}


def _uid(raw: str, not_found: type[NotFound]) -> uuid.UUID:
    """A path id: anything that is not a UUID names nothing (404, never a 500)."""
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise not_found() from None


def _user(developer: OptionalDeveloperDep) -> uuid.UUID | None:
    return None if developer is None else developer.id


@router.get(
    "/apis",
    tags=["catalogue"],
    response_model=Collection[PortalApiSummary],
    openapi_extra=LISTED,
    description="The published APIs the caller may see, without their OpenAPI documents "
    "(`GET /apis/{node}` has them)." + LIST_HELP,
)
async def list_portal_apis(
    request: Request,
    developer: OptionalDeveloperDep,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[PortalApiSummary]:
    page = await list_apis(session=session, user_id=_user(developer), query=query)
    return collection(request, page, page.items)


@router.get(
    "/apis/{node}", tags=["catalogue"], response_model=Envelope[PortalApi], openapi_extra=OPEN
)
async def get_portal_api(
    node: str, developer: OptionalDeveloperDep, session: SessionDep
) -> Envelope[PortalApi]:
    """One published API the caller may see, with its OpenAPI document."""
    found = await get_api(
        session=session, user_id=_user(developer), node_id=_uid(node, PortalApiNotFound)
    )
    return Envelope[PortalApi](data=found)


@router.get(
    "/products",
    tags=["catalogue"],
    response_model=Collection[PortalProduct],
    openapi_extra=LISTED,
    description="The published API products the caller may see, each with those of its "
    "APIs the caller may see." + LIST_HELP,
)
async def list_portal_products(
    request: Request,
    developer: OptionalDeveloperDep,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[PortalProduct]:
    page = await list_products(session=session, user_id=_user(developer), query=query)
    return collection(request, page, page.items)


@router.get(
    "/products/{node}",
    tags=["catalogue"],
    response_model=Envelope[PortalProduct],
    openapi_extra=OPEN,
)
async def get_portal_product(
    node: str, developer: OptionalDeveloperDep, session: SessionDep
) -> Envelope[PortalProduct]:
    """One published API product the caller may see, with those of its APIs the caller may
    see."""
    found = await get_product(
        session=session, user_id=_user(developer), node_id=_uid(node, PortalProductNotFound)
    )
    return Envelope[PortalProduct](data=found)
