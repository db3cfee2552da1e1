"""The audit writer: every mutation records who did what to which entity, before and after.

Entries are written in the same transaction as the change they describe, so a change and its
entry are stored together or not at all. Values of sensitive keys (passwords, secrets,
tokens) are replaced before anything is stored.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Index, String, Text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.clock import utcnow
from portico.core.db.base import Base, IdMixin
from portico.core.db.types import UTCDateTime, json_type
from portico.core.logging import redact

if TYPE_CHECKING:
    from starlette.requests import Request


@dataclass(frozen=True)
class Actor:
    """Who acts, and from where: taken from the authenticated request (or a job)."""

    id: uuid.UUID | None
    email: str | None
    kind: str = "user"  # user | system | dataplane
    request_id: str | None = None
    ip: str | None = None

    @classmethod
    def system(cls, label: str = "system") -> Actor:
        return cls(id=None, email=None, kind=label)

    @classmethod
    def anonymous(cls, request: Request) -> Actor:
        """The caller of an operation that needs no sign-in, before it has proven who it is:
        only where it called from (the request id and client address the middleware set)."""
        return cls(
            id=None,
            email=None,
            kind="anonymous",
            request_id=getattr(request.state, "request_id", None),
            ip=getattr(request.state, "client_ip", None),
        )


class AuditEntry(IdMixin, Base):
    __tablename__ = "audit_log"
    __table_args__ = (
        Index("ix_audit_log_org_occurred", "org_id", "occurred_at"),
        # (occurred_at, id) is the order of listings and the keyset of exports: both come
        # straight from the index, ties included
        Index("ix_audit_log_surface_occurred_id", "surface", "occurred_at", "id"),
    )

    occurred_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    surface: Mapped[str] = mapped_column(String(16), default="management")
    org_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    actor_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    actor_email: Mapped[str | None] = mapped_column(String(254), default=None)
    actor_kind: Mapped[str] = mapped_column(String(16), default="user")
    action: Mapped[str] = mapped_column(String(64))
    entity_type: Mapped[str] = mapped_column(String(64))
    entity_id: Mapped[str | None] = mapped_column(String(64), default=None)
    bundle: Mapped[str | None] = mapped_column(String(64), default=None)
    module: Mapped[str | None] = mapped_column(String(64), default=None)
    summary: Mapped[str] = mapped_column(Text, default="")
    before: Mapped[Any] = mapped_column(json_type(), nullable=True, default=None)
    after: Mapped[Any] = mapped_column(json_type(), nullable=True, default=None)
    request_id: Mapped[str | None] = mapped_column(String(128), default=None)
    ip: Mapped[str | None] = mapped_column(String(64), default=None)


async def record(
    session: AsyncSession,
    actor: Actor,
    *,
    action: str,
    entity_type: str,
    entity_id: uuid.UUID | str | None,
    org_id: uuid.UUID | None = None,
    before: Any = None,
    after: Any = None,
    summary: str = "",
    surface: str = "management",
    bundle: str | None = None,
    module: str | None = None,
) -> AuditEntry:
    entry = AuditEntry(
        id=uuid.uuid4(),
        occurred_at=utcnow(),
        surface=surface,
        org_id=org_id,
        actor_id=actor.id,
        actor_email=actor.email,
        actor_kind=actor.kind,
        action=action,
        entity_type=entity_type,
        entity_id=str(entity_id) if entity_id is not None else None,
        bundle=bundle,
        module=module,
        summary=summary,
        before=redact(_jsonable(before)),
        after=redact(_jsonable(after)),
        request_id=actor.request_id,
        ip=actor.ip,
    )
    session.add(entry)
    await session.flush()
    return entry


def _jsonable(value: Any) -> Any:
    """Snapshots arrive as dicts from ``model_dump(mode="json")``; anything else is refused so
    that an ORM object never ends up half-serialised in the log."""
    if value is None or isinstance(value, dict | list | str | int | float | bool):
        return value
    raise TypeError(f"audit snapshots must be JSON values, got {type(value).__name__}")
