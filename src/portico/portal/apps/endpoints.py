"""``/apps``: the signed-in developer's apps. Creating one answers its ``key-auth`` key once
(``credentials: [{"type": "key-auth", "key": ...}]``), as rotating it does; nothing else
ever shows the key (the app shows the first characters, ``key_hint``). An app of another
account is 404, as one that does not exist.

``GET /apps/{app}/analytics``: the app's traffic over its active subscriptions, read from
their gateway connections now (``usage.py`` says how several add up)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request, Response

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.public import (
    AnalyticsUnavailable,
    DeveloperAppCreate,
    DeveloperAppNameTaken,
    DeveloperAppNotFound,
    DeveloperAppRead,
    DeveloperAppUpdate,
    DeveloperAppWithKey,
    SubscriptionAnalytics,
    app_usage,
    create_app,
    delete_app,
    get_app,
    list_apps,
    rotate_app_key,
    update_app,
)
from portico.portal.access import DeveloperDep
from portico.portal.apps.usage import app_analytics
from portico.portal.ids import path_id

router = APIRouter(prefix="/apps", tags=["apps"])

LIST = ListSpec(
    sortable=frozenset({"name", "created_at", "updated_at"}),
    default_sort="name",
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
NAME_TAKEN = problems(DeveloperAppNameTaken, detail="You already have an app of this name.")


def _location(request: Request, app_id: object) -> str:
    return f"{request.scope.get('root_path', '')}/apps/{app_id}"


@router.get(
    "",
    response_model=Collection[DeveloperAppRead],
    openapi_extra={"parameters": LIST.openapi_parameters({})},
)
async def list_my_apps(
    request: Request,
    developer: DeveloperDep,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[DeveloperAppRead]:
    """The signed-in developer's apps, by name (sorts: name, created_at, updated_at), without
    their keys."""
    page = await list_apps(session=session, owner_id=developer.id, query=query)
    return collection(request, page, page.items)


@router.post(
    "",
    status_code=201,
    response_model=Envelope[DeveloperAppWithKey],
    responses=NAME_TAKEN,
)
async def create_my_app(
    body: DeveloperAppCreate,
    request: Request,
    response: Response,
    developer: DeveloperDep,
    session: SessionDep,
) -> Envelope[DeveloperAppWithKey]:
    """A new app with its generated ``key-auth`` key, which this answer shows once and
    nothing ever shows again (it is kept encrypted). The key reaches a gateway with the
    app's first approved subscription there."""
    created = await create_app(
        session=session,
        owner=developer.user,
        data=body,
        settings=request.app.state.settings,
        actor=developer.actor,
        now=request.app.state.clock.now(),
    )
    response.headers["Location"] = _location(request, created.id)
    return Envelope[DeveloperAppWithKey](data=created)


@router.get("/{app}", response_model=Envelope[DeveloperAppRead])
async def get_my_app(
    app: str, developer: DeveloperDep, session: SessionDep
) -> Envelope[DeveloperAppRead]:
    """One of the developer's apps, without its key."""
    found = await get_app(
        session=session, owner_id=developer.id, app_id=path_id(app, DeveloperAppNotFound)
    )
    return Envelope[DeveloperAppRead](data=found)


@router.patch("/{app}", response_model=Envelope[DeveloperAppRead], responses=NAME_TAKEN)
async def update_my_app(
    app: str,
    body: DeveloperAppUpdate,
    request: Request,
    developer: DeveloperDep,
    session: SessionDep,
) -> Envelope[DeveloperAppRead]:
    """Rename or describe the app (any subset of ``{name, description}``). A rename is the
    portal's: the gateways know the app by its key."""
    updated = await update_app(
        session=session,
        owner=developer.user,
        app_id=path_id(app, DeveloperAppNotFound),
        data=body,
        actor=developer.actor,
        now=request.app.state.clock.now(),
    )
    return Envelope[DeveloperAppRead](data=updated)


@router.delete("/{app}", status_code=204, response_class=Response)
async def delete_my_app(
    app: str, request: Request, developer: DeveloperDep, session: SessionDep
) -> Response:
    """Delete the app: its live subscriptions are cancelled and its key stops working on the
    gateways (removed there durably, retried until done)."""
    await delete_app(
        session=session,
        owner=developer.user,
        app_id=path_id(app, DeveloperAppNotFound),
        actor=developer.actor,
        now=request.app.state.clock.now(),
    )
    return Response(status_code=204)


@router.post("/{app}/credentials/rotate", response_model=Envelope[DeveloperAppWithKey])
async def rotate_my_app_key(
    app: str, request: Request, developer: DeveloperDep, session: SessionDep
) -> Envelope[DeveloperAppWithKey]:
    """A new ``key-auth`` key for the app, shown in this answer once. The gateways its
    subscriptions reach are given the new key (durably); the old one stops working there."""
    rotated = await rotate_app_key(
        session=session,
        owner=developer.user,
        app_id=path_id(app, DeveloperAppNotFound),
        settings=request.app.state.settings,
        actor=developer.actor,
        now=request.app.state.clock.now(),
    )
    return Envelope[DeveloperAppWithKey](data=rotated)


@router.get(
    "/{app}/analytics",
    response_model=Envelope[SubscriptionAnalytics],
    responses=problems(
        AnalyticsUnavailable,
        detail="A gateway connection of the app's subscriptions could not be read just now.",
    ),
)
async def my_app_analytics(
    app: str,
    request: Request,
    developer: DeveloperDep,
    session: SessionDep,
    window: Annotated[
        Literal["1h", "24h", "7d"], Query(description="The window read, up to now.")
    ] = "24h",
) -> Envelope[SubscriptionAnalytics]:
    """The app's traffic over the window on its active subscriptions, as their gateway
    connections report it: requests, errors (status ≥ 400), the response time's
    percentiles (with several subscriptions, the highest of theirs: an upper bound) and the
    quota closest to being spent with what its current window used. No active subscription
    on a gateway: zeros and nulls."""
    usages = await app_usage(
        session=session,
        owner_id=developer.id,
        app_id=path_id(app, DeveloperAppNotFound),
        window=window,
        settings=request.app.state.settings,
    )
    return Envelope[SubscriptionAnalytics](data=app_analytics(window, usages))
