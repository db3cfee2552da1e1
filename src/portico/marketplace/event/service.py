"""Reading the marketplace audit log: filters, listing, one event, statistics, types.

The log is append-only; nothing here writes. Events are written by the mutations of every
other domain through ``SiteCaller.audit``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.audit import AuditEntry
from portico.core.errors import NotFound, ValidationFailed
from portico.core.pagination import ListQuery, Page
from portico.marketplace.event.repository import EventFilters, EventRepository
from portico.marketplace.event.schemas import DayCount, EventStats, EventTypes

#: the filters every events endpoint accepts (``filter[<name>]``)
FILTERS = frozenset(
    {"operation", "entity_type", "entity_id", "actor", "bundle", "module", "from", "to"}
)

# A "+" left unencoded in a query string arrives as a space: "…T10:00:00 02:00". The space
# can stand for nothing else before a trailing offset, so it is read back as the "+".
_SPACE_OFFSET = re.compile(r"^(.*\d) (\d{2}(?::?\d{2})?)$")


class EventNotFound(NotFound):
    default_detail = "event not found"


def parse_filters(raw: Mapping[str, str]) -> EventFilters:
    """The ``filter[...]`` values of a request (names already checked by ``ListSpec``).

    ``actor`` is an account id when it is a UUID, else an email (case-insensitive).
    ``from`` is inclusive and ``to`` exclusive, so that consecutive ranges never count an
    event twice; both need a time zone, since a naive time would be read in nobody's zone.
    """
    actor = raw.get("actor")
    actor_id: uuid.UUID | None = None
    if actor is not None:
        try:
            actor_id = uuid.UUID(actor)
        except ValueError:
            actor_id = None
    since = _moment("from", raw.get("from"))
    until = _moment("to", raw.get("to"))
    if since is not None and until is not None and until < since:
        raise ValidationFailed(
            [{"parameter": "filter[to]", "detail": "filter[to]: must not be before filter[from]"}]
        )
    return EventFilters(
        operation=raw.get("operation"),
        entity_type=raw.get("entity_type"),
        entity_id=raw.get("entity_id"),
        actor_id=actor_id,
        actor_email=actor if actor is not None and actor_id is None else None,
        bundle=raw.get("bundle"),
        module=raw.get("module"),
        since=since,
        until=until,
    )


def _moment(name: str, raw: str | None) -> datetime | None:
    if raw is None:
        return None
    parameter = f"filter[{name}]"
    text = _SPACE_OFFSET.sub(r"\1+\2", raw.strip())
    try:
        value = datetime.fromisoformat(text)
        moment = value.astimezone(UTC) if value.tzinfo is not None else None
    except (ValueError, OverflowError):  # overflow: year 1 east of UTC, year 9999 west of it
        moment = None
    if moment is None:
        raise ValidationFailed(
            [
                {
                    "parameter": parameter,
                    "detail": f"{parameter}: must be an ISO-8601 date-time with a time zone, "
                    "e.g. 2025-01-31T00:00:00Z",
                }
            ]
        )
    return moment


async def list_events(*, session: AsyncSession, query: ListQuery) -> Page[AuditEntry]:
    return await EventRepository(session).page(parse_filters(query.filters), query)


async def get_event(*, session: AsyncSession, event_id: uuid.UUID) -> AuditEntry:
    entry = await EventRepository(session).get(event_id)
    if entry is None:
        raise EventNotFound()
    return entry


async def stats(*, session: AsyncSession, filters: EventFilters) -> EventStats:
    repository = EventRepository(session)
    by_operation = dict(await repository.counts_by_operation(filters))
    return EventStats(
        total=sum(by_operation.values()),
        by_operation=by_operation,
        by_entity_type=dict(await repository.counts_by_entity_type(filters)),
        by_day=[DayCount(day=day, count=n) for day, n in await repository.counts_by_day(filters)],
    )


async def types(*, session: AsyncSession) -> EventTypes:
    return EventTypes(**await EventRepository(session).types())
