"""The feature registry and the organisation-level overrides.

A feature is registered by a sync (``POST /features/sync``, and ``portico bootstrap``) when
its module is installed, and never deleted: when its module is no longer installed the sync
marks it removed (``removed_at``), keeping its state and its overrides for the day it comes
back."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime, json_type


class Feature(IdMixin, TimestampMixin, Base):
    __tablename__ = "portal_features"

    #: the name of the module it stands for (``modules.py``), e.g. ``gateway_sync``
    key: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(200))
    #: the platform state: off switches the module's endpoints off for everyone but the
    #: organisations whose override says otherwise
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    #: the feature's settings, valid against its settings schema (``registry.py``)
    config: Mapped[dict[str, Any]] = mapped_column(json_type(), default=dict)
    #: when a sync found its module no longer installed; null while it is
    removed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class FeatureOverride(IdMixin, TimestampMixin, Base):
    """One organisation's own state of one feature, which beats the platform's."""

    __tablename__ = "portal_feature_overrides"
    __table_args__ = (UniqueConstraint("organisation_id", "feature_id"),)

    #: no index of its own: the unique constraint's leads with it
    organisation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_organisations.id", ondelete="CASCADE")
    )
    feature_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_features.id", ondelete="CASCADE"), index=True
    )
    enabled: Mapped[bool] = mapped_column(Boolean)
