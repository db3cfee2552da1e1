"""Site-wide notifications (permission ``administer marketplace notifications``): what the
marketplace told whom, with the delivery state of the email that went with it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.outbox import OutboxEmail
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.notification import service as notification_service
from portico.marketplace.notification.models import Notification
from portico.marketplace.notification.schemas import (
    EmailDelivery,
    NotificationRead,
    NotificationSummary,
)
from portico.marketplace.notification.service import AUDIENCES, NotificationNotFound

router = APIRouter(prefix="/notifications", tags=["notifications"])

FILTERS = frozenset({"type", "audience", "recipient", "from", "to"})
LIST = ListSpec(
    sortable=frozenset({"created_at", "type", "audience"}),
    default_sort="-created_at",
    filterable=FILTERS,
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
_DAY_OR_MOMENT = {
    "anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]
}
# what filters_of accepts as a recipient: a user id, or text with an '@' between two other
# characters (an email address, not checked further: it is only compared)
_RECIPIENT = {
    "anyOf": [
        {"type": "string", "format": "uuid"},
        {"type": "string", "pattern": r"^[\s\S]*[^@][\s\S]*@[\s\S]*[^@][\s\S]*$"},
    ]
}
FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "type": {"description": "Notifications of this type, e.g. user.activated."},
    "audience": {
        "description": "Notifications for this audience.",
        "schema": {"type": "string", "enum": sorted(AUDIENCES)},
    },
    "recipient": {
        "description": "Notifications to this user (an id) or email address.",
        "schema": _RECIPIENT,
    },
    "from": {
        "description": "Created at or after this ISO 8601 date or date-time (a date: its "
        "whole day, UTC).",
        "schema": _DAY_OR_MOMENT,
    },
    "to": {
        "description": "Created at or before this ISO 8601 date or date-time (a date: its "
        "whole day, UTC).",
        "schema": _DAY_OR_MOMENT,
    },
}
Reader = Annotated[SiteCaller, Depends(require("administer marketplace notifications"))]


def summary_filters(request: Request) -> dict[str, str]:
    """The list's filters. A summary has no page, limit or sort: its description leaves
    them out, so the strict query check (``core/query.py``) refuses them."""
    return dict(LIST.parse(list(request.query_params.multi_items())).filters)


def _read(notification: Notification, email: OutboxEmail | None) -> NotificationRead:
    return NotificationRead.model_validate(notification).model_copy(
        update={"email": EmailDelivery.model_validate(email) if email is not None else None}
    )


@router.get(
    "",
    response_model=Collection[NotificationRead],
    openapi_extra={"parameters": LIST.openapi_parameters(FILTER_PARAMETERS)},
)
async def list_notifications(
    request: Request,
    _caller: Reader,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[NotificationRead]:
    """Newest first. Filters: ``filter[type]``, ``filter[audience]``, ``filter[recipient]``
    (a user id or an email address), ``filter[from]``/``filter[to]`` (ISO 8601, inclusive;
    a date alone covers the whole day, UTC)."""
    page, emails = await notification_service.list_(session=session, query=query)
    items = [
        _read(n, emails.get(n.email_id) if n.email_id is not None else None) for n in page.items
    ]
    return collection(request, page, items)


@router.get(
    "/summary",
    response_model=Envelope[NotificationSummary],
    openapi_extra={"parameters": LIST.openapi_parameters(FILTER_PARAMETERS, paged=False)},
)
async def summarise_notifications(
    _caller: Reader,
    session: SessionDep,
    filters: dict[str, str] = Depends(summary_filters),
) -> Envelope[NotificationSummary]:
    """Counts by type and by audience of the notifications the same filters as the list
    match."""
    counts = await notification_service.summary(session=session, filters=filters)
    return Envelope[NotificationSummary](data=NotificationSummary.model_validate(counts))


@router.get("/{notification}", response_model=Envelope[NotificationRead])
async def get_notification(
    notification: str, _caller: Reader, session: SessionDep
) -> Envelope[NotificationRead]:
    """One notification, with the delivery state of its email (``email``: null when none
    was sent)."""
    found, email = await notification_service.get(
        session=session, notification_id=parse_uuid(notification, NotificationNotFound)
    )
    return Envelope[NotificationRead](data=_read(found, email))
