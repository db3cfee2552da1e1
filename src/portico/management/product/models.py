"""A product: a bundle of APIs with a quota; it acts in an environment once deployed there."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.clock import utcnow
from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime, json_type


class Product(IdMixin, TimestampMixin, Base):
    __tablename__ = "products"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    display_name: Mapped[str] = mapped_column(String(128), default="")
    description: Mapped[str] = mapped_column(String(1024), default="")
    #: ids of the APIs it covers (strings: an API deleted later simply covers nothing)
    api_ids: Mapped[list[str]] = mapped_column(json_type(), default=list)
    #: {limit, interval, interval_unit, key_scope}; None: no quota (traffic refused)
    quota: Mapped[dict[str, Any] | None] = mapped_column(json_type(), nullable=True)


class ProductDeployment(Base):
    """A product deployed in an environment."""

    __tablename__ = "product_deployments"

    product_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("products.id", ondelete="CASCADE"), primary_key=True
    )
    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    deployed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
