from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from portico.core.schema import ReadSchema, ResourceName, WriteSchema, plain_text
from portico.management.upstream.specification import UpstreamSpecification

Description = Annotated[str, Field(max_length=1000), AfterValidator(plain_text)]

_NAME = "Unique within the environment, e.g. 'orders-backend'."
_DESCRIPTION = "Free text for people, at most 1000 characters; tabs and line breaks allowed."
_SPECIFICATION = (
    "Nodes (or discovery), balancing, timeouts and health checks. Omitted fields take "
    "APISIX's defaults, which are stored and returned."
)


class UpstreamCreate(WriteSchema):
    name: ResourceName = Field(description=_NAME)
    description: Description = Field("", description=_DESCRIPTION)
    specification: UpstreamSpecification = Field(description=_SPECIFICATION)


class UpstreamReplace(WriteSchema):
    """PUT: every field is given; what is omitted inside ``specification`` is reset to its
    default."""

    name: ResourceName = Field(description=_NAME)
    description: Description = Field(description=_DESCRIPTION)
    specification: UpstreamSpecification = Field(description=_SPECIFICATION)


class UpstreamUpdate(WriteSchema):
    name: ResourceName | None = Field(None, description=_NAME)
    description: Description | None = Field(None, description=_DESCRIPTION)
    specification: UpstreamSpecification | None = Field(
        None,
        description="Replaces the whole specification (it is not merged with the stored "
        "one): send it complete; omitted fields take their defaults. " + _SPECIFICATION,
    )


class UpstreamRead(ReadSchema):
    id: uuid.UUID
    org_id: uuid.UUID
    environment_id: uuid.UUID
    name: str
    description: str
    specification: dict[str, Any] = Field(
        description="The specification as stored: validated, with every default filled in."
    )
    created_at: datetime
    updated_at: datetime
