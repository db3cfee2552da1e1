from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import Field

from portico.core.schema import ReadSchema, WriteSchema

Id = Annotated[uuid.UUID, Field(strict=False)]


class DeployRequest(WriteSchema):
    environment_id: Id = Field(description="The environment to deploy to.")
    force: bool = Field(
        False,
        description="Replace another revision of the same API live in that environment "
        "(an atomic swap) instead of refusing with 409.",
    )


class EnvironmentRequest(WriteSchema):
    environment_id: Id = Field(description="The environment concerned.")


class DeploymentRead(ReadSchema):
    id: uuid.UUID
    api_id: uuid.UUID
    revision_id: uuid.UUID
    revision_number: int
    environment_id: uuid.UUID
    environment_name: str
    status: str = "DEPLOYED"
    deployed_at: datetime
    config_version: int


class DeployResult(DeploymentRead):
    success: bool = True
    message: str
    warnings: list[str]


class DryRunResult(ReadSchema):
    success: bool
    message: str
    warnings: list[str]
    routes: int = Field(description="How many routes the revision would serve there.")


class UndeployResult(ReadSchema):
    success: bool = True
    message: str
    config_version: int


class DeploymentList(ReadSchema):
    items: list[DeploymentRead]
