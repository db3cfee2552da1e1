"""HTTP shapes of the marketplace audit events (snake_case, read-only)."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any, Protocol

from pydantic import Field

from portico.core.schema import PlainReadSchema


class EventRow(Protocol):
    """What an event is read from: an ``AuditEntry`` or a row of its columns (the export
    reads plain rows, which are cheaper than ORM objects)."""

    id: uuid.UUID
    occurred_at: datetime
    action: str
    entity_type: str
    entity_id: str | None
    bundle: str | None
    module: str | None
    summary: str
    actor_id: uuid.UUID | None
    actor_email: str | None
    actor_kind: str
    ip: str | None
    request_id: str | None
    before: Any
    after: Any


class EventActor(PlainReadSchema):
    id: uuid.UUID | None = Field(description="The account that acted; null for the system.")
    email: str | None
    kind: str = Field(description="user, system or dataplane.")


class EventRead(PlainReadSchema):
    id: uuid.UUID
    occurred_at: datetime
    operation: str = Field(description="'<entity>.<verb>', e.g. 'user.approve'.")
    entity_type: str
    entity_id: str | None
    bundle: str | None = Field(description="The content bundle (apis, api_products, page).")
    module: str | None = Field(description="The module that made the change.")
    summary: str
    actor: EventActor
    ip: str | None = Field(description="The client address of the request.")
    request_id: str | None
    before: Any = Field(description="The entity before the change (secrets redacted).")
    after: Any = Field(description="The entity after the change (secrets redacted).")

    @classmethod
    def of(cls, row: EventRow) -> EventRead:
        return cls(
            id=row.id,
            occurred_at=row.occurred_at,
            operation=row.action,
            entity_type=row.entity_type,
            entity_id=row.entity_id,
            bundle=row.bundle,
            module=row.module,
            summary=row.summary,
            actor=EventActor(id=row.actor_id, email=row.actor_email, kind=row.actor_kind),
            ip=row.ip,
            request_id=row.request_id,
            before=row.before,
            after=row.after,
        )


class DayCount(PlainReadSchema):
    day: date = Field(description="A UTC calendar day.")
    count: int


class EventStats(PlainReadSchema):
    total: int = Field(description="Events matched by the filters.")
    by_operation: dict[str, int]
    by_entity_type: dict[str, int]
    by_day: list[DayCount] = Field(description="Days with at least one event, oldest first.")


class EventTypes(PlainReadSchema):
    """The distinct values present in the log, for building filters."""

    operations: list[str]
    entity_types: list[str]
    bundles: list[str]
    modules: list[str]
