"""``GET /me``: the account and its organisations; ``GET /notifications``: the notices
addressed to it (approvals, rejections, revocations, invitations, with their reasons),
newest first.

Notifications carry no read flag (``marketplace/notification/models.py``), so there is no
``POST /notifications/{id}/read``: a client remembers what it has shown.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.public import Me, MyNotification, notifications, profile
from portico.portal.access import DeveloperDep

router = APIRouter(tags=["account"])

NOTIFICATIONS = ListSpec(
    sortable=frozenset({"created_at"}),
    default_sort="-created_at",
    filterable=frozenset({"type"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
NOTIFICATION_FILTERS: dict[str, dict[str, Any]] = {
    "type": {"description": "Notifications of this type, e.g. partner_approved."},
}


@router.get("/me", response_model=Envelope[Me])
async def get_me(developer: DeveloperDep, session: SessionDep) -> Envelope[Me]:
    """The signed-in account: id, email, display name, status, and its organisations with
    its roles and teams in each."""
    return Envelope[Me](data=await profile(session=session, user_id=developer.id))


@router.get(
    "/notifications",
    response_model=Collection[MyNotification],
    openapi_extra={"parameters": NOTIFICATIONS.openapi_parameters(NOTIFICATION_FILTERS)},
    description="The notifications addressed to the signed-in account, newest first (sort "
    "`created_at` for oldest first); `filter[type]` narrows them to one type.",
)
async def list_my_notifications(
    request: Request,
    developer: DeveloperDep,
    session: SessionDep,
    query: ListQuery = Depends(list_query(NOTIFICATIONS)),
) -> Collection[MyNotification]:
    page = await notifications(session=session, user_id=developer.id, query=query)
    return collection(request, page, page.items)
