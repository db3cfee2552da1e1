"""Writing audit events for the events tests: one at a time through the kernel's writer (a
chosen ``occurred_at`` is set afterwards), or thousands at once with a bulk insert."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import insert

from portico.core import audit
from portico.core.audit import Actor, AuditEntry
from portico.core.db.engine import Database

OPS = Actor(
    id=uuid.UUID("00000000-0000-4000-8000-0000000000a1"),
    email="Ops@Example.com",
    request_id="req-ops-1",
    ip="198.51.100.7",
)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@dataclass
class EventWriter:
    database: Database

    async def __call__(
        self,
        operation: str = "user.approve",
        *,
        entity_type: str = "user",
        entity_id: str | None = None,
        occurred_at: datetime | None = None,
        actor: Actor = OPS,
        surface: str = "marketplace",
        bundle: str | None = None,
        module: str | None = "user",
        summary: str = "",
        before: Any = None,
        after: Any = None,
    ) -> uuid.UUID:
        async with self.database.session() as session, session.begin():
            entry = await audit.record(
                session,
                actor,
                action=operation,
                entity_type=entity_type,
                entity_id=entity_id or str(uuid.uuid4()),
                summary=summary,
                surface=surface,
                bundle=bundle,
                module=module,
                before=before,
                after=after,
            )
            if occurred_at is not None:
                entry.occurred_at = occurred_at
        return entry.id

    async def bulk(self, rows: Iterable[dict[str, Any]]) -> None:
        """Insert many events at once; each row needs ``occurred_at`` and may override any
        other column."""
        values = [
            {
                "id": uuid.uuid4(),
                "surface": "marketplace",
                "actor_id": OPS.id,
                "actor_email": OPS.email,
                "actor_kind": "user",
                "action": "user.approve",
                "entity_type": "user",
                "entity_id": None,
                "module": "user",
                "summary": "",
                **row,
            }
            for row in rows
        ]
        async with self.database.session() as session, session.begin():
            await session.execute(insert(AuditEntry), values)


@pytest.fixture
def write(database: Database) -> EventWriter:
    return EventWriter(database)
