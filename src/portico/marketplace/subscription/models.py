"""A subscription as stored: who asked (the app, its owner), for what (the node), where it
stands (``status``, the reason of a rejection or revocation), and the remote work still owed
for it (give or take access on the gateway connection) with the state of its retries.

The subscription outlives its app and its node (both ``SET NULL``, their names kept): the
developer still sees why access ended, and the remote withdrawal still knows what to take
back (``connection_id``, ``remote_product_id``, ``remote_id``)."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import Enum, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime


class SubscriptionStatus(enum.StrEnum):
    PENDING = "pending"
    #: approved; the gateway is being told (retried until it has been)
    PROVISIONING = "provisioning"
    ACTIVE = "active"
    REJECTED = "rejected"
    REVOKED = "revoked"
    CANCELLED = "cancelled"


class RemoteAction(enum.StrEnum):
    """The remote work owed for a subscription."""

    NONE = "none"
    #: give the app access (the subscription is provisioning)
    GRANT = "grant"
    #: take access back (the subscription ended after it was, or may have been, granted)
    WITHDRAW = "withdraw"


def _enum(kind: type[enum.Enum]) -> Enum:
    return Enum(kind, native_enum=False, length=16, values_callable=lambda e: [m.value for m in e])


class Subscription(IdMixin, TimestampMixin, Base):
    __tablename__ = "subscriptions"
    __table_args__ = (
        Index("ix_subscriptions_status_requested", "status", "requested_at", "id"),
        Index("ix_subscriptions_due_at", "due_at"),
    )

    app_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("developer_apps.id", ondelete="SET NULL"), default=None, index=True
    )
    app_name: Mapped[str] = mapped_column(String(100))
    #: the portal account that owns the app: who is told of decisions
    owner_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None, index=True
    )
    node_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("catalogue_nodes.id", ondelete="SET NULL"), default=None, index=True
    )
    #: ``apis`` or ``api_products``
    node_bundle: Mapped[str] = mapped_column(String(16))
    node_title: Mapped[str] = mapped_column(String(255))
    status: Mapped[SubscriptionStatus] = mapped_column(_enum(SubscriptionStatus))
    #: why it was rejected or revoked, as the administrator wrote it
    reason: Mapped[str | None] = mapped_column(Text, default=None)
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime())
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    decided_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    activated_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)

    # ---- the gateway side: where access is given, and the work owed for it
    #: the node's connection when it was approved (None: a portal-native node)
    connection_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("gateway_connections.id", ondelete="SET NULL"), default=None, index=True
    )
    #: the remote API's or product's id on that connection
    remote_target_id: Mapped[str | None] = mapped_column(String(255), default=None)
    #: the remote product granted (a product's own, or an API's implied product)
    remote_product_id: Mapped[str | None] = mapped_column(String(64), default=None)
    #: the remote app holding the grant
    remote_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("developer_app_remotes.id", ondelete="SET NULL"), default=None
    )
    remote_action: Mapped[RemoteAction] = mapped_column(
        _enum(RemoteAction), default=RemoteAction.NONE
    )
    #: bumped by each change of ``remote_action``: a job that finishes after the subscription
    #: changed under it does not record an outcome that is no longer wanted
    remote_generation: Mapped[int] = mapped_column(Integer, default=0)
    #: when the owed work is next tried; while a job has it in hand, the end of its lease
    due_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
