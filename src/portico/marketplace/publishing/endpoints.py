"""``/publishing``: bulk editorial transitions and visibility (``access content``; each item
then needs its own permission), cross-organisation syndication and its portals (``syndicate
apis to portals``; changing syndication is the super-administrator's alone).

Bulk answers are 200 with one report per node given, in order, and ``meta.failed`` listing
the refused ones ``{id, status, detail}``; a refused item changes nothing and never undoes
the others.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from portico.core.db.session import SessionDep
from portico.core.envelope import BulkResult, Collection, collection
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, require
from portico.marketplace.publishing import service as publishing_service
from portico.marketplace.publishing.schemas import (
    PortalRead,
    SyndicationChange,
    SyndicationReport,
    TransitionBulk,
    TransitionReport,
    VisibilityChange,
    VisibilityReport,
)
from portico.marketplace.publishing.service import SuperAdministratorsOnly

router = APIRouter(prefix="/publishing", tags=["publishing and syndication"])

PORTALS = ListSpec(
    sortable=frozenset({"name", "created_at"}),
    default_sort="name",
    filterable=frozenset({"name"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "name": {"description": "The organisation of this name."},
}
Editor = Annotated[SiteCaller, Depends(require("access content"))]
Syndicator = Annotated[SiteCaller, Depends(require("syndicate apis to portals"))]
NAMES_NOTHING: dict[int | str, dict[str, Any]] = {
    400: {
        "description": "The body is not valid, or names an organisation or a team that does "
        "not exist; `errors` points at each member at fault. Nothing was changed."
    }
}


@router.get(
    "/portals",
    response_model=Collection[PortalRead],
    openapi_extra={"parameters": PORTALS.openapi_parameters(FILTER_PARAMETERS)},
)
async def list_portals(
    request: Request,
    _caller: Syndicator,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(PORTALS))],
) -> Collection[PortalRead]:
    """Portal organisations syndication can target, with the domains their portals answer
    on; by name. Filter: ``filter[name]``."""
    page = await publishing_service.list_portals(session=session, query=query)
    return collection(request, page, [PortalRead.of(o) for o in page.items])


@router.post(
    "/portals",
    response_model=BulkResult[SyndicationReport],
    responses={
        **NAMES_NOTHING,
        **problems(
            SuperAdministratorsOnly,
            detail="The account lacks 'syndicate apis to portals', or is not a "
            "super-administrator (the administrator site role): only one may change "
            "syndication.",
        ),
    },
)
async def syndicate(
    body: SyndicationChange, request: Request, caller: Syndicator, session: SessionDep
) -> BulkResult[SyndicationReport]:
    """Add, remove or set the portals APIs and products are syndicated to. A product's
    syndication publishes its APIs to the same portals: such a publication is kept whatever
    is asked of the API itself, and reported (``kept``, ``implied_by``)."""
    return await publishing_service.syndicate(
        session=session, caller=caller, data=body, now=request.app.state.clock.now()
    )


@router.post("/transitions", response_model=BulkResult[TransitionReport])
async def apply_transitions(
    body: TransitionBulk, request: Request, caller: Editor, session: SessionDep
) -> BulkResult[TransitionReport]:
    """Apply one editorial transition to many APIs and products. Each item needs the
    transition's permission (``use editorial transition <id>``) and a state it leaves."""
    return await publishing_service.apply_transitions(
        session=session, caller=caller, data=body, now=request.app.state.clock.now()
    )


@router.post("/visibility", response_model=BulkResult[VisibilityReport], responses=NAMES_NOTHING)
async def set_visibility(
    body: VisibilityChange, request: Request, caller: Editor, session: SessionDep
) -> BulkResult[VisibilityReport]:
    """Make many nodes public, internal (signed-in users) or visible to organisations (and
    within them, when ``teams`` lists some of theirs, to those teams). Choosing organisation
    visibility replaces the audience whole: a team restriction not given again is cleared.
    Each item needs ``edit any <bundle> content``."""
    return await publishing_service.set_visibility(
        session=session, caller=caller, data=body, now=request.app.state.clock.now()
    )
