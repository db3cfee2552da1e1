from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import Field

from portico.core.schema import ReadSchema, WriteSchema

OrgName = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")]


class OrganizationCreate(WriteSchema):
    name: OrgName = Field(description="Unique across the platform.")
    description: str = Field("", max_length=1000)


class OrganizationUpdate(WriteSchema):
    name: OrgName | None = None
    description: str | None = Field(None, max_length=1000)


class OrganizationRead(ReadSchema):
    id: uuid.UUID
    name: str
    description: str
    created_at: datetime
    updated_at: datetime
