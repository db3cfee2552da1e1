"""Global plugins: attached to every route of an environment (lowest precedence)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, TimestampMixin
from portico.core.db.types import json_type


class GlobalPlugin(TimestampMixin, Base):
    __tablename__ = "global_plugins"

    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    config: Mapped[Any] = mapped_column(json_type())
