from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import Field

from portico.core.schema import ReadSchema, WriteSchema


class DataplaneTokenCreate(WriteSchema):
    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")] = Field(
        description="What the token is for, e.g. the node or cluster using it."
    )


class DataplaneTokenRead(ReadSchema):
    id: uuid.UUID
    environment_id: uuid.UUID
    name: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class DataplaneTokenIssued(DataplaneTokenRead):
    token: str = Field(description="Shown once: give it to `portico gateway --token`.")


class DataplaneTokenList(ReadSchema):
    items: list[DataplaneTokenRead]
