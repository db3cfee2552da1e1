"""A widget: a saved analytics query with a chart type, shown on a dashboard."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import json_type


class Widget(IdMixin, TimestampMixin, Base):
    __tablename__ = "widgets"

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    metric: Mapped[str] = mapped_column(String(64))
    aggregation: Mapped[str] = mapped_column(String(16))
    #: dimension names, in order
    dimensions: Mapped[list[str]] = mapped_column(json_type(), default=list)
    chart: Mapped[str] = mapped_column(String(16))
    #: {apiId?, environmentId?, window: "1h" | "24h" | "7d" | {startTime, endTime}}
    filters: Mapped[dict[str, Any]] = mapped_column(json_type(), default=dict)
