"""Environments: where APIs are deployed and which gateway hostnames serve them; the
deployments live in them and the numbered configurations gateways load from them.

``Deployment`` and ``EnvironmentConfig`` are written by the deploy operations
(``portico.management.deployment``) and read by most domains (is an API, a revision, an
upstream deployed? which config version is current?): they live here, below all of them.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from portico.core.clock import utcnow
from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime, json_type


class Environment(IdMixin, TimestampMixin, Base):
    __tablename__ = "environments"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(String(1000), default="")
    hosts: Mapped[list[GatewayHost]] = relationship(
        lazy="selectin",
        cascade="all, delete-orphan",
        order_by="GatewayHost.position",
    )

    @property
    def gateway_hosts(self) -> list[str]:
        return [h.host for h in self.hosts]


class GatewayHost(Base):
    """One hostname the gateway answers for an environment. Unique across the platform: the
    gateway picks the environment of a request by its Host, so two environments cannot share
    one."""

    __tablename__ = "gateway_hosts"

    host: Mapped[str] = mapped_column(String(253), primary_key=True)
    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(default=0)


class Deployment(IdMixin, Base):
    """One revision of an API live in one environment (at most one per API and environment)."""

    __tablename__ = "deployments"
    __table_args__ = (UniqueConstraint("api_id", "environment_id"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    api_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("apis.id", ondelete="RESTRICT"), index=True
    )
    revision_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("revisions.id", ondelete="RESTRICT"), index=True
    )
    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="RESTRICT"), index=True
    )
    deployed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    deployed_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    config_version: Mapped[int]
    #: the secrets its plugins name (``$env://``, ``$secret://``, literals of
    #: ``secret_references`` fields), resolved when it was deployed and sealed for gateways:
    #: pointer of the field in the revision (``/routeSpec/0/plugins/edge-auth/signing_secret``)
    #: → sealed value. Stable across the snapshots it is published in.
    sealed_secrets: Mapped[dict[str, str]] = mapped_column(json_type(), default=dict)


class EnvironmentConfig(IdMixin, Base):
    """The n-th complete configuration of an environment, as gateways load it."""

    __tablename__ = "environment_configs"
    __table_args__ = (UniqueConstraint("environment_id", "version"),)

    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), index=True
    )
    version: Mapped[int]
    content_hash: Mapped[str] = mapped_column(String(64))
    config: Mapped[Any] = mapped_column(json_type())
    reason: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
