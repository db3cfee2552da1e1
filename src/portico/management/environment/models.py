"""Environments: where APIs are deployed and which gateway hostnames serve them."""

from __future__ import annotations

import uuid

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from portico.core.db.base import Base, IdMixin, TimestampMixin


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
