"""A developer's app as stored, and what was made for it on a gateway connection.

The app's ``key-auth`` key is kept sealed (``core/sealing.py``, a purpose of its own): the
portal shows it once, at creation and at each rotation, and the subscriptions module opens
it to give it to a gateway. ``AppRemote`` remembers, per connection and remote environment,
the remote developer and app made for it, and the remote work still owed to them (a rotated
key to set, the remote app to delete once the portal app is gone); it outlives its app
(``app_id`` set to NULL) until that work is done.
"""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import Enum, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime

#: as the management service's app names (``ResourceName``): the remote app is named the same
NAME_MAX_LENGTH = 100


class DeveloperApp(IdMixin, TimestampMixin, Base):
    __tablename__ = "developer_apps"
    __table_args__ = (UniqueConstraint("owner_id", "name"),)

    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(NAME_MAX_LENGTH))
    description: Mapped[str] = mapped_column(Text, default="")
    #: the key-auth key, sealed with the server's keys
    sealed_key: Mapped[str] = mapped_column(Text)
    #: its first characters, so that people can tell keys apart
    key_hint: Mapped[str] = mapped_column(String(8))
    key_issued_at: Mapped[datetime] = mapped_column(UTCDateTime())


class RemoteWork(enum.StrEnum):
    """What is still owed to a remote app."""

    #: nothing
    NONE = "none"
    #: the portal app's key was rotated: the remote app must get the new one
    SET_KEY = "set_key"
    #: the portal app was deleted: the remote app must be deleted
    REMOVE = "remove"


class AppRemote(IdMixin, TimestampMixin, Base):
    __tablename__ = "developer_app_remotes"
    __table_args__ = (
        UniqueConstraint("app_id", "connection_id", "environment_id"),
        Index("ix_developer_app_remotes_due_at", "due_at"),
    )

    #: None once the portal app is deleted (the remote app still to be removed)
    app_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("developer_apps.id", ondelete="SET NULL"), default=None, index=True
    )
    connection_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("gateway_connections.id", ondelete="CASCADE"), index=True
    )
    #: the remote environment the remote app lives in (the remote side's id, as text)
    environment_id: Mapped[str] = mapped_column(String(64))
    remote_developer_id: Mapped[str] = mapped_column(String(64))
    remote_app_id: Mapped[str] = mapped_column(String(64))
    work: Mapped[RemoteWork] = mapped_column(
        Enum(
            RemoteWork, native_enum=False, length=16, values_callable=lambda e: [m.value for m in e]
        ),
        default=RemoteWork.NONE,
    )
    #: when the owed work is next tried; while a job has it in hand, the end of its lease
    due_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
