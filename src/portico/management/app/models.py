"""An app: a developer's credential set in one environment. It owns one consumer (whose
credentials gateways check) and subscribes to products, each with a rank: the gateway meters
a request against the lowest-ranked product that covers the called API."""

from __future__ import annotations

import enum
import uuid

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin


class AppStatus(enum.StrEnum):
    ACTIVE = "active"
    REVOKED = "revoked"


class App(IdMixin, TimestampMixin, Base):
    __tablename__ = "apps"
    __table_args__ = (UniqueConstraint("developer_id", "environment_id", "name"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    developer_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("developers.id", ondelete="CASCADE"), index=True
    )
    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), index=True
    )
    #: the consumer it owns (deleted with the app)
    consumer_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("consumers.id", ondelete="RESTRICT"), unique=True
    )
    name: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default=AppStatus.ACTIVE)


class AppProduct(Base):
    """An app's subscription to a product, with its rank (lower is tried first)."""

    __tablename__ = "app_products"

    app_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("apps.id", ondelete="CASCADE"), primary_key=True
    )
    product_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("products.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    rank: Mapped[int] = mapped_column(Integer, default=0)
