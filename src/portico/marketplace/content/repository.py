"""Queries of the content endpoints: nodes of a bundle or awaiting a decision, filtered."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import Select, select

from portico.core.db.repository import Repository
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    SourceType,
)


@dataclass(frozen=True)
class ContentFilters:
    bundles: Collection[Bundle]
    moderation_states: Collection[ModerationState] | None = None
    published: bool | None = None
    source_type: SourceType | None = None
    connection_id: uuid.UUID | None = None
    organisation_id: uuid.UUID | None = None


class ContentRepository(Repository[CatalogueNode]):
    model = CatalogueNode
    sort_columns = {
        "title": CatalogueNode.title,
        "created_at": CatalogueNode.created_at,
        "updated_at": CatalogueNode.updated_at,
    }

    def matching(self, filters: ContentFilters) -> Select[CatalogueNode]:
        statement = select(CatalogueNode).where(CatalogueNode.bundle.in_(list(filters.bundles)))
        if filters.moderation_states is not None:
            statement = statement.where(
                CatalogueNode.moderation_state.in_(list(filters.moderation_states))
            )
        if filters.published is not None:
            statement = statement.where(CatalogueNode.published == filters.published)
        if filters.source_type is not None:
            statement = statement.where(CatalogueNode.source_type == filters.source_type)
        if filters.connection_id is not None:
            statement = statement.where(CatalogueNode.connection_id == filters.connection_id)
        if filters.organisation_id is not None:
            statement = statement.where(CatalogueNode.organisation_id == filters.organisation_id)
        return statement
