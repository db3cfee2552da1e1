from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from portico.core.schema import ReadSchema, WriteSchema, no_control_characters
from portico.management.user.schemas import Email

PersonName = Annotated[
    str,
    Field(min_length=1, max_length=64, pattern=r"^\S(.*\S)?$"),
    AfterValidator(no_control_characters),
]
Status = Literal["active", "inactive"]

_EMAIL = "Unique within the organisation; stored lower-cased."
_STATUS = "An inactive developer's apps stop authenticating at the gateways."


class DeveloperCreate(WriteSchema):
    first_name: PersonName
    last_name: PersonName
    email: Email = Field(description=_EMAIL)
    status: Status = Field("active", description=_STATUS)


class DeveloperUpdate(WriteSchema):
    first_name: PersonName | None = None
    last_name: PersonName | None = None
    email: Email | None = Field(None, description=_EMAIL)
    status: Status | None = Field(None, description=_STATUS)


class DeveloperRead(ReadSchema):
    id: uuid.UUID
    org_id: uuid.UUID
    first_name: str
    last_name: str
    email: str
    status: str
    app_count: int = Field(description="How many apps the developer owns.")
    created_at: datetime
    updated_at: datetime
