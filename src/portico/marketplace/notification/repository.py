from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, func, select

from portico.core.db.repository import Repository
from portico.core.outbox import OutboxEmail
from portico.marketplace.notification.models import Notification


@dataclass(frozen=True)
class NotificationFilters:
    type: str | None = None
    audience: str | None = None
    recipient_user_id: uuid.UUID | None = None
    recipient_email: str | None = None  # compared case-insensitively
    since: datetime | None = None  # inclusive
    before: datetime | None = None  # exclusive


class NotificationRepository(Repository[Notification]):
    model = Notification
    sort_columns = {
        "created_at": Notification.created_at,
        "type": Notification.type,
        "audience": Notification.audience,
    }

    def matching(self, filters: NotificationFilters) -> Select[Notification]:
        statement = select(Notification)
        if filters.type is not None:
            statement = statement.where(Notification.type == filters.type)
        if filters.audience is not None:
            statement = statement.where(Notification.audience == filters.audience)
        if filters.recipient_user_id is not None:
            statement = statement.where(Notification.recipient_user_id == filters.recipient_user_id)
        if filters.recipient_email is not None:
            statement = statement.where(
                func.lower(Notification.recipient_email) == filters.recipient_email.lower()
            )
        if filters.since is not None:
            statement = statement.where(Notification.created_at >= filters.since)
        if filters.before is not None:
            statement = statement.where(Notification.created_at < filters.before)
        return statement

    async def counts(self, statement: Select[Notification]) -> dict[str, dict[str, int]]:
        """Rows of ``statement`` counted by type and by audience, in one pass."""
        matched = statement.order_by(None).subquery()
        rows = await self.session.execute(
            select(matched.c.type, matched.c.audience, func.count()).group_by(
                matched.c.type, matched.c.audience
            )
        )
        by_type: dict[str, int] = {}
        by_audience: dict[str, int] = {}
        for type_, audience, count in rows:
            by_type[type_] = by_type.get(type_, 0) + int(count)
            by_audience[audience] = by_audience.get(audience, 0) + int(count)
        return {"by_type": by_type, "by_audience": by_audience}

    async def emails(self, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, OutboxEmail]:
        """The outbox rows of a page of notifications, by id (one query per page)."""
        if not ids:
            return {}
        rows = await self.session.scalars(select(OutboxEmail).where(OutboxEmail.id.in_(ids)))
        return {row.id: row for row in rows}
