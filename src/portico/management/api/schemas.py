from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, Field

from portico.core.schema import ReadSchema, ResourceName, WriteSchema, plain_text
from portico.management.api.models import Api
from portico.management.api.ports import DeploymentRow

#: an API's ``desc``, and a revision's service's and routes' (``revision/specs.py``)
DESC_MAX_LENGTH = 256
DESC_TOO_LONG = "desc: must be at most 256 characters long"

# The length is checked by the service, to answer in the seed's words
# ("desc: must be at most 256 characters long"), which a schema error cannot say.
Desc = Annotated[
    str, Field(json_schema_extra={"maxLength": DESC_MAX_LENGTH}), AfterValidator(plain_text)
]

_NAME = "Unique within the organisation."
_DESC = f"At most {DESC_MAX_LENGTH} characters."


class ApiCreate(WriteSchema):
    name: ResourceName = Field(description=_NAME)
    desc: Desc = Field("", description=_DESC)


class ApiUpdate(WriteSchema):
    name: ResourceName | None = Field(None, description=_NAME)
    desc: Desc | None = Field(None, description=_DESC)


class ApiDeploymentRead(ReadSchema):
    environment_id: uuid.UUID
    environment_name: str
    revision_id: uuid.UUID
    revision_number: int
    deployed_at: datetime


class ApiRead(ReadSchema):
    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    desc: str
    revision_count: int
    deployments: list[ApiDeploymentRead] = Field(
        description="The revision live in each environment, by environment name; "
        "read from the deployments themselves, so never stale."
    )
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, api: Api, revision_count: int, deployments: list[DeploymentRow]) -> ApiRead:
        return cls(
            id=api.id,
            org_id=api.org_id,
            name=api.name,
            desc=api.description,
            revision_count=revision_count,
            deployments=[ApiDeploymentRead.model_validate(d._asdict()) for d in deployments],
            created_at=api.created_at,
            updated_at=api.updated_at,
        )
