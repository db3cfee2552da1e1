"""``/apps/{app}/subscriptions``: an app's subscriptions to published APIs and products.

A request is ``pending`` until an administrator approves it (then ``provisioning`` while the
gateway is told, then ``active``) or rejects it with a reason; the developer cancels a
pending or active one. An API or product the caller may not see in the catalogue is 404,
as one that does not exist; so is an app of another account.

``GET /apps/{app}/subscriptions/{subscription}`` is a Portico addition to the design's
routes: the ``Location`` of a new subscription names it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.public import (
    AlreadySubscribed,
    DeveloperAppNotFound,
    SubscriptionNotFound,
    SubscriptionStatus,
    TransitionRefused,
    cancel_subscription,
    get_subscription,
    list_subscriptions,
    subscribe,
)
from portico.portal.access import DeveloperDep
from portico.portal.ids import path_id
from portico.portal.subscriptions.schemas import AppSubscription, SubscriptionRequest

router = APIRouter(prefix="/apps/{app}/subscriptions", tags=["subscriptions"])

LIST = ListSpec(
    sortable=frozenset({"requested_at", "status", "node_title"}),
    default_sort="requested_at",
    filterable=frozenset({"status"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "status": {
        "description": "Subscriptions in this status.",
        "schema": {"type": "string", "enum": [s.value for s in SubscriptionStatus]},
    },
}


@router.post(
    "",
    status_code=201,
    response_model=Envelope[AppSubscription],
    responses=problems(
        AlreadySubscribed,
        detail="The app already has a pending, provisioning or active subscription to it.",
    ),
)
async def create_subscription(
    app: str,
    body: SubscriptionRequest,
    request: Request,
    response: Response,
    developer: DeveloperDep,
    session: SessionDep,
) -> Envelope[AppSubscription]:
    """Ask for the app's access to a published API (``{"api": id}``) or API product
    (``{"product": id}``): ``pending`` until an administrator decides; the developer is
    notified of the decision (``GET /notifications``)."""
    app_id = path_id(app, DeveloperAppNotFound)
    created = await subscribe(
        session=session,
        owner=developer.user,
        app_id=app_id,
        api=body.api,
        product=body.product,
        actor=developer.actor,
        now=request.app.state.clock.now(),
    )
    response.headers["Location"] = (
        f"{request.scope.get('root_path', '')}/apps/{app_id}/subscriptions/{created.id}"
    )
    return Envelope[AppSubscription](data=AppSubscription.of(created))


@router.get(
    "",
    response_model=Collection[AppSubscription],
    openapi_extra={"parameters": LIST.openapi_parameters(FILTER_PARAMETERS)},
)
async def list_app_subscriptions(
    app: str,
    request: Request,
    developer: DeveloperDep,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[AppSubscription]:
    """The app's subscriptions, whatever their status, with the reason of a rejection or
    revocation; oldest request first (sorts: requested_at, status, node_title).
    ``filter[status]`` narrows them to one status."""
    page = await list_subscriptions(
        session=session,
        owner_id=developer.id,
        app_id=path_id(app, DeveloperAppNotFound),
        query=query,
    )
    return collection(request, page, [AppSubscription.of(s) for s in page.items])


@router.get("/{subscription}", response_model=Envelope[AppSubscription])
async def get_app_subscription(
    app: str, subscription: str, developer: DeveloperDep, session: SessionDep
) -> Envelope[AppSubscription]:
    """One of the app's subscriptions."""
    found = await get_subscription(
        session=session,
        owner_id=developer.id,
        app_id=path_id(app, DeveloperAppNotFound),
        subscription_id=path_id(subscription, SubscriptionNotFound),
    )
    return Envelope[AppSubscription](data=AppSubscription.of(found))


@router.delete(
    "/{subscription}",
    status_code=204,
    response_class=Response,
    responses=problems(
        TransitionRefused,
        detail="The subscription is not pending or active: it cannot be cancelled.",
    ),
)
async def cancel_app_subscription(
    app: str, subscription: str, request: Request, developer: DeveloperDep, session: SessionDep
) -> Response:
    """Cancel a pending or active subscription; an active one's access on the gateway is
    taken back (durably, retried until done)."""
    await cancel_subscription(
        session=session,
        owner=developer.user,
        app_id=path_id(app, DeveloperAppNotFound),
        subscription_id=path_id(subscription, SubscriptionNotFound),
        actor=developer.actor,
        now=request.app.state.clock.now(),
    )
    return Response(status_code=204)
