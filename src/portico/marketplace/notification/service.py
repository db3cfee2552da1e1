"""Site-wide notifications: reading them (the admin API), and ``notify``, which the
marketplace's operations call to tell someone about a change."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import mailer
from portico.core.account import User
from portico.core.db.session import after_commit
from portico.core.errors import NotFound, ValidationFailed
from portico.core.outbox import OutboxEmail, enqueue_email
from portico.core.pagination import ListQuery, Page
from portico.marketplace.notification.models import Notification
from portico.marketplace.notification.repository import (
    NotificationFilters,
    NotificationRepository,
)

#: who a notification is for
AUDIENCES = frozenset({"user", "administrators", "organisation"})
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class NotificationNotFound(NotFound):
    default_detail = "notification not found"


async def notify(
    session: AsyncSession,
    *,
    type: str,
    audience: str,
    subject: str,
    body: str,
    recipient: User | None,
    email_kind: str | None,
    now: datetime,
    to: str | None = None,
    email_body: str | None = None,
    entity_type: str | None = None,
    entity_id: uuid.UUID | str | None = None,
    data: Mapping[str, Any] | None = None,
) -> Notification:
    """Record that the marketplace told someone something, in the caller's transaction.

    ``type`` names the event (``user_activated``, ``subscription_rejected``...), ``audience``
    is one of ``AUDIENCES``; ``recipient`` is the account concerned, if any. When
    ``email_kind`` is given (``activation``, ``rejection``...) and there is an address —
    ``to``, else the recipient's email — an email is queued in the outbox in the same
    transaction: it leaves only if the change commits, and the mailer is woken once it has
    (the request's ``SessionDep``; other callers are picked up by the mailer's poll).
    Sending never happens here, so a slow or down mail server cannot fail the caller.

    The notification keeps ``subject`` and ``body`` and administrators can read them: put
    anything secret (a link with a token) only in ``email_body``, which replaces ``body`` in
    the email and is not kept on the notification. ``entity_type``/``entity_id`` say what it
    is about; ``data`` holds structured details (a rejection reason...).
    """
    if audience not in AUDIENCES:
        raise ValueError(f"audience must be one of {sorted(AUDIENCES)}, not {audience!r}")
    address = to or (recipient.email if recipient is not None else None)
    email: OutboxEmail | None = None
    if email_kind is not None and address:
        email = await enqueue_email(
            session,
            kind=email_kind,
            to=address,
            subject=subject,
            body=body if email_body is None else email_body,
            now=now,
        )
        after_commit(session, mailer.wake)
    notification = Notification(
        id=uuid.uuid4(),
        type=type,
        audience=audience,
        recipient_user_id=recipient.id if recipient is not None else None,
        recipient_email=address,
        subject=subject,
        body=body,
        entity_type=entity_type,
        entity_id=str(entity_id) if entity_id is not None else None,
        data=dict(data or {}),
        email_id=email.id if email is not None else None,
        created_at=now,
    )
    session.add(notification)
    await session.flush()
    return notification


async def list_(
    *, session: AsyncSession, query: ListQuery
) -> tuple[Page[Notification], dict[uuid.UUID, OutboxEmail]]:
    """A page of notifications and the outbox rows of their emails."""
    repository = NotificationRepository(session)
    page = await repository.page(repository.matching(filters_of(query.filters)), query)
    emails = await repository.emails([n.email_id for n in page.items if n.email_id is not None])
    return page, emails


async def summary(*, session: AsyncSession, filters: Mapping[str, str]) -> dict[str, Any]:
    repository = NotificationRepository(session)
    counts = await repository.counts(repository.matching(filters_of(filters)))
    return {"total": sum(counts["by_type"].values()), **counts}


async def get(
    *, session: AsyncSession, notification_id: uuid.UUID
) -> tuple[Notification, OutboxEmail | None]:
    repository = NotificationRepository(session)
    notification = await repository.get(notification_id)
    if notification is None:
        raise NotificationNotFound()
    email = None
    if notification.email_id is not None:
        email = (await repository.emails([notification.email_id])).get(notification.email_id)
    return notification, email


def filters_of(raw: Mapping[str, str]) -> NotificationFilters:
    """``filter[type]``, ``filter[audience]``, ``filter[recipient]`` (a user id or an email
    address), ``filter[from]`` and ``filter[to]`` (ISO 8601, both inclusive; a date alone
    covers that whole day, UTC)."""
    errors: list[dict[str, str]] = []

    def fail(name: str, detail: str) -> None:
        errors.append({"parameter": f"filter[{name}]", "detail": f"filter[{name}]: {detail}"})

    audience = raw.get("audience")
    if audience is not None and audience not in AUDIENCES:
        fail("audience", f"must be one of {', '.join(sorted(AUDIENCES))}")
    user_id, email = None, None
    recipient = raw.get("recipient")
    if recipient is not None:
        try:
            user_id = uuid.UUID(recipient)
        except ValueError:
            if "@" in recipient.strip("@"):
                email = recipient
            else:
                fail("recipient", "must be a user id or an email address")
    since = _moment(raw, "from", fail, end_of_day=False)
    before = _moment(raw, "to", fail, end_of_day=True)
    if errors:
        raise ValidationFailed(errors)
    return NotificationFilters(
        type=raw.get("type"),
        audience=audience,
        recipient_user_id=user_id,
        recipient_email=email,
        since=since,
        before=before,
    )


def _moment(
    raw: Mapping[str, str], name: str, fail: Callable[[str, str], None], *, end_of_day: bool
) -> datetime | None:
    """A time bound; for ``to`` the first instant after it (the bound is inclusive)."""
    value = raw.get(name)
    if value is None:
        return None
    text = value.strip().replace(" ", "+")  # an unencoded '+' of an offset arrives as ' '
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        fail(name, "must be an ISO 8601 date or date-time, e.g. 2025-01-31T12:00:00Z")
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if not end_of_day:
        return moment
    return moment + (timedelta(days=1) if _DATE_ONLY.match(text) else timedelta(microseconds=1))
