from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from portico.core.audit import AuditEntry
from portico.core.schema import ReadSchema


class AuditActorRead(ReadSchema):
    id: uuid.UUID | None
    email: str | None
    kind: str


class AuditEntryRead(ReadSchema):
    id: uuid.UUID
    occurred_at: datetime
    actor: AuditActorRead
    action: str = Field(description="'<entity>.<verb>', e.g. 'upstream.update'.")
    entity_type: str
    entity_id: str | None
    summary: str
    before: Any = Field(description="The entity before the change (secrets redacted).")
    after: Any = Field(description="The entity after the change (secrets redacted).")
    request_id: str | None
    ip: str | None

    @classmethod
    def of(cls, entry: AuditEntry) -> AuditEntryRead:
        return cls(
            id=entry.id,
            occurred_at=entry.occurred_at,
            actor=AuditActorRead(id=entry.actor_id, email=entry.actor_email, kind=entry.actor_kind),
            action=entry.action,
            entity_type=entry.entity_type,
            entity_id=entry.entity_id,
            summary=entry.summary,
            before=entry.before,
            after=entry.after,
            request_id=entry.request_id,
            ip=entry.ip,
        )
