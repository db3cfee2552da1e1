"""The parts of a node's HTTP shape every bundle shares (snake_case, read only). The
catalogue's API and product shapes and the content endpoints' shapes extend
:class:`NodeSummary`."""

from __future__ import annotations

import uuid
from datetime import datetime
from uuid import UUID

from pydantic import Field

from portico.core.schema import PlainReadSchema
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    SourceType,
    Visibility,
)


class NodeSource(PlainReadSchema):
    # ``UUID``, not ``uuid.UUID``: the member ``uuid`` below shadows the module in this class's
    # (postponed) annotations
    type: SourceType = Field(description="custom (written in the portal) or imported.")
    connection_id: UUID | None = Field(
        description="The gateway connection it was imported from (null when custom, or once "
        "that connection was deleted)."
    )
    remote_id: str | None = Field(
        description="The API's api_id, or the product's product_id, on that connection."
    )
    uuid: str | None = Field(description="The remote side's own identifier, when it has one.")
    revision: str | None = Field(description="The remote revision last imported.")

    @classmethod
    def of(cls, node: CatalogueNode) -> NodeSource:
        return cls(
            type=node.source_type,
            connection_id=node.connection_id,
            remote_id=node.remote_id,
            uuid=node.remote_uuid,
            revision=node.remote_revision,
        )


class NodeSummary(PlainReadSchema):
    id: uuid.UUID
    bundle: Bundle
    title: str
    organisation: uuid.UUID | None = Field(description="The owning portal organisation's id.")
    visibility: Visibility
    moderation_state: ModerationState | None = Field(
        description="draft, in_review, published or archived; null for bundles that are not "
        "moderated (pages)."
    )
    published: bool = Field(description="Whether the portal shows it (to its audience).")
    source: NodeSource
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, node: CatalogueNode) -> NodeSummary:
        return cls(**summary_fields(node))


def summary_fields(node: CatalogueNode) -> dict[str, object]:
    """The shared members, for the ``of`` of a shape that extends the summary."""
    return {
        "id": node.id,
        "bundle": node.bundle,
        "title": node.title,
        "organisation": node.organisation_id,
        "visibility": node.visibility,
        "moderation_state": node.moderation_state,
        "published": node.published,
        "source": NodeSource.of(node),
        "created_at": node.created_at,
        "updated_at": node.updated_at,
    }
