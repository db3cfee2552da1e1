"""A catalogue node as stored, and what hangs off it: a product's APIs, the organisations
(and teams) an ``organisation``-visible node is shown to, and the portals it is syndicated to.

One table holds every bundle (as Drupal's node table does): listing, moderation and
publishing treat APIs and products alike, and a bundle's own fields are nullable columns
(``documentation`` for APIs, ``quota`` for products). ``published`` is what the portal reads:
for moderated bundles it mirrors ``moderation_state == published``, for pages it is the
publish/unpublish switch.
"""

from __future__ import annotations

import enum
import uuid
from typing import Any

from sqlalchemy import (
    Boolean,
    Enum,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import json_type


class Bundle(enum.StrEnum):
    APIS = "apis"
    API_PRODUCTS = "api_products"
    PAGE = "page"


#: the bundles under editorial moderation (the others are published and unpublished)
MODERATED = frozenset({Bundle.APIS, Bundle.API_PRODUCTS})


class ModerationState(enum.StrEnum):
    DRAFT = "draft"
    IN_REVIEW = "in_review"
    PUBLISHED = "published"
    ARCHIVED = "archived"


class Visibility(enum.StrEnum):
    #: everyone, signed in or not
    PUBLIC = "public"
    #: signed-in portal users
    INTERNAL = "internal"
    #: members of the listed organisations (of the listed teams, when some are)
    ORGANISATION = "organisation"


class SourceType(enum.StrEnum):
    #: written in the portal
    CUSTOM = "custom"
    #: read from a gateway connection
    IMPORTED = "imported"


def _enum(kind: type[enum.Enum], length: int) -> Enum:
    return Enum(
        kind, native_enum=False, length=length, values_callable=lambda e: [m.value for m in e]
    )


class CatalogueNode(IdMixin, TimestampMixin, Base):
    __tablename__ = "catalogue_nodes"
    __table_args__ = (
        # an imported remote API or product is one node per connection: re-imports update it
        UniqueConstraint("connection_id", "bundle", "remote_id"),
        # the list orders (each with the id tie-breaker pagination adds)
        Index("ix_catalogue_nodes_bundle_title", "bundle", "title", "id"),
        Index("ix_catalogue_nodes_bundle_created", "bundle", "created_at", "id"),
        Index("ix_catalogue_nodes_bundle_updated", "bundle", "updated_at", "id"),
        Index("ix_catalogue_nodes_bundle_source", "bundle", "source_type", "title", "id"),
        # the state order; the visibility last lets the portal count and page the published
        # nodes a caller may see from the index alone (marketplace/storefront/repository.py)
        Index(
            "ix_catalogue_nodes_bundle_state_visibility",
            "bundle",
            "moderation_state",
            "title",
            "id",
            "visibility",
        ),
        Index("ix_catalogue_nodes_bundle_visibility", "bundle", "visibility", "title", "id"),
        # an organisation's nodes counted and ordered by any list order from the index alone
        Index(
            "ix_catalogue_nodes_organisation_orders",
            "organisation_id",
            "bundle",
            "title",
            "created_at",
            "updated_at",
            "moderation_state",
            "id",
        ),
    )

    bundle: Mapped[Bundle] = mapped_column(_enum(Bundle, 16))
    title: Mapped[str] = mapped_column(String(255))
    version: Mapped[str] = mapped_column(String(64), default="")
    #: an API's overview (Markdown)
    overview: Mapped[str] = mapped_column(Text, default="")
    #: a product's description, a page's body (Markdown)
    description: Mapped[str] = mapped_column(Text, default="")
    #: an API's OpenAPI document (an object), validated when written
    documentation: Mapped[dict[str, Any] | None] = mapped_column(json_type(), default=None)
    #: a product's quota: {limit, interval, interval_unit} as the gateway enforces it
    quota: Mapped[dict[str, Any] | None] = mapped_column(json_type(), default=None)
    organisation_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("portal_organisations.id", ondelete="SET NULL"), default=None
    )
    visibility: Mapped[Visibility] = mapped_column(
        _enum(Visibility, 16), default=Visibility.INTERNAL
    )
    #: None for bundles that are not moderated
    moderation_state: Mapped[ModerationState | None] = mapped_column(
        _enum(ModerationState, 16), default=None
    )
    published: Mapped[bool] = mapped_column(Boolean, default=False)
    source_type: Mapped[SourceType] = mapped_column(
        _enum(SourceType, 16), default=SourceType.CUSTOM
    )
    #: the connection it was imported from (None once that connection is deleted: the node
    #: stays, still marked imported, with its remote ids)
    connection_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("gateway_connections.id", ondelete="SET NULL"), default=None, index=True
    )
    #: the remote API's or product's id on that connection (api_id, product_id)
    remote_id: Mapped[str | None] = mapped_column(String(255), default=None)
    remote_uuid: Mapped[str | None] = mapped_column(String(64), default=None)
    #: the remote revision last imported
    remote_revision: Mapped[str | None] = mapped_column(String(64), default=None)
    #: a product's gateway type (the connection's source type when imported)
    gateway_type: Mapped[str | None] = mapped_column(String(64), default=None)
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )


class ProductApi(Base):
    """An API associated with a product, in the product's order."""

    __tablename__ = "catalogue_product_apis"

    product_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("catalogue_nodes.id", ondelete="CASCADE"), primary_key=True
    )
    api_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("catalogue_nodes.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)


class NodeAudience(IdMixin, Base):
    """An organisation (or one of its teams) an ``organisation``-visible node is shown to. A
    row without a team is the whole organisation."""

    __tablename__ = "catalogue_node_audiences"
    __table_args__ = (UniqueConstraint("node_id", "organisation_id", "team_id"),)

    node_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("catalogue_nodes.id", ondelete="CASCADE"), index=True
    )
    organisation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_organisations.id", ondelete="CASCADE"), index=True
    )
    team_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("portal_teams.id", ondelete="CASCADE"), default=None
    )


class Syndication(Base):
    """A node published to another organisation's portal (set explicitly; publications a
    product implies for its APIs are derived, never stored)."""

    __tablename__ = "catalogue_syndications"

    node_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("catalogue_nodes.id", ondelete="CASCADE"), primary_key=True
    )
    organisation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_organisations.id", ondelete="CASCADE"), primary_key=True, index=True
    )
