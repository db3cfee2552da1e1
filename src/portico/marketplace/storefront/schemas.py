"""What the portal shows of a catalogue node (snake_case): what a developer needs to choose
and use an API, and nothing of how it is administered (moderation, source connection,
remote ids, who wrote it)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from portico.core.schema import PlainReadSchema
from portico.marketplace.catalogue.schemas import QuotaRead
from portico.marketplace.node.models import CatalogueNode, Visibility


class PortalApiSummary(PlainReadSchema):
    """An API as a list shows it: without its OpenAPI document (``GET /apis/{node}``)."""

    id: uuid.UUID
    title: str
    version: str
    overview: str = Field(description="Markdown.")
    organisation: uuid.UUID | None = Field(description="The owning portal organisation's id.")
    visibility: Visibility = Field(
        description="public (everyone), internal (signed-in accounts) or organisation (the "
        "members of its organisations or teams)."
    )
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, node: CatalogueNode) -> PortalApiSummary:
        return cls(
            id=node.id,
            title=node.title,
            version=node.version,
            overview=node.overview,
            organisation=node.organisation_id,
            visibility=node.visibility,
            created_at=node.created_at,
            updated_at=node.updated_at,
        )


class PortalApi(PortalApiSummary):
    documentation: dict[str, Any] | None = Field(description="The OpenAPI document, or null.")

    @classmethod
    def of(cls, node: CatalogueNode) -> PortalApi:
        return cls(**PortalApiSummary.of(node).model_dump(), documentation=node.documentation)


class PortalApiRef(PlainReadSchema):
    id: uuid.UUID
    title: str
    version: str


class PortalProduct(PlainReadSchema):
    id: uuid.UUID
    title: str
    description: str = Field(description="Markdown.")
    organisation: uuid.UUID | None = Field(description="The owning portal organisation's id.")
    visibility: Visibility
    quota: QuotaRead | None = Field(description="What a subscription may use; null: no quota.")
    apis: list[PortalApiRef] = Field(
        description="Its APIs that the caller may see, in the product's order (the others "
        "are left out, as if they were not there)."
    )
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, node: CatalogueNode, apis: list[CatalogueNode]) -> PortalProduct:
        return cls(
            id=node.id,
            title=node.title,
            description=node.description,
            organisation=node.organisation_id,
            visibility=node.visibility,
            quota=None if node.quota is None else QuotaRead.model_validate(node.quota),
            apis=[PortalApiRef(id=a.id, title=a.title, version=a.version) for a in apis],
            created_at=node.created_at,
            updated_at=node.updated_at,
        )
