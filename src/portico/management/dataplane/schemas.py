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


class HeartbeatRequest(WriteSchema):
    node_id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")
    environment_id: Annotated[uuid.UUID, Field(strict=False)]
    config_version: int = Field(ge=0)


class NodeRead(ReadSchema):
    node_id: str
    config_version: int
    expected_version: int
    in_sync: bool
    address: str | None
    first_seen_at: datetime
    last_seen_at: datetime


class NodeList(ReadSchema):
    items: list[NodeRead]
    expected_version: int
