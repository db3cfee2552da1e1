"""Revisions and their upstream bindings."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ForeignKey, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import json_type


class Revision(IdMixin, TimestampMixin, Base):
    """The service spec and route spec of an API at one point. Whether it is ACTIVE is not
    stored: it is ACTIVE exactly while a deployment points at it."""

    __tablename__ = "revisions"
    __table_args__ = (UniqueConstraint("api_id", "number"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    api_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("apis.id", ondelete="CASCADE"), index=True)
    number: Mapped[int]
    service_spec: Mapped[Any] = mapped_column(json_type(), default=dict)
    route_spec: Mapped[Any] = mapped_column(json_type(), default=list)
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    bindings: Mapped[list[UpstreamBinding]] = relationship(
        lazy="selectin", cascade="all, delete-orphan", order_by="UpstreamBinding.environment_id"
    )


class UpstreamBinding(Base):
    """Which upstream a revision's routes target in one environment."""

    __tablename__ = "upstream_bindings"

    revision_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("revisions.id", ondelete="CASCADE"), primary_key=True
    )
    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    # deleting an upstream that a *deployed* revision uses is refused by the upstream
    # service; bindings of revisions that are not deployed go with the upstream
    upstream_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("upstreams.id", ondelete="CASCADE"), index=True
    )
