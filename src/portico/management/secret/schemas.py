from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import Field

from portico.core.schema import ReadSchema, WriteSchema

#: what ``$secret://NAME`` can name (``gateway.plugins.base.STORE_REFERENCE``)
SecretName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]


class SecretCreate(WriteSchema):
    name: SecretName = Field(
        description="Unique in the organisation; plugins name it as $secret://<name>."
    )
    value: str = Field(
        min_length=1,
        max_length=4096,
        description="The secret; stored encrypted, never returned.",
    )


class SecretRead(ReadSchema):
    """A stored secret as anyone sees it: its name, never its value."""

    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    created_at: datetime
    updated_at: datetime
