"""HTTP shapes of developer apps (snake_case), for the developer portal API: the app, and
the app with its key, which only its creation and a rotation answer."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from portico.core.schema import PlainReadSchema, PlainWriteSchema, no_control_characters
from portico.marketplace.developer_app.models import NAME_MAX_LENGTH, DeveloperApp

AppName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=NAME_MAX_LENGTH,
        pattern=r"^\S(.*\S)?$",
        description="Unique among the developer's apps; the gateway's app is named the same.",
    ),
    AfterValidator(no_control_characters),
]
Description = Annotated[str, Field(max_length=2000)]


class DeveloperAppCreate(PlainWriteSchema):
    name: AppName
    description: Description = ""


class DeveloperAppUpdate(PlainWriteSchema):
    """Any subset."""

    name: AppName | None = None
    description: Description | None = None


class DeveloperAppRead(PlainReadSchema):
    id: uuid.UUID
    name: str
    description: str
    key_hint: str = Field(description="The first characters of the app's key.")
    key_issued_at: datetime
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, app: DeveloperApp) -> DeveloperAppRead:
        return cls.model_validate(app)


class Credential(PlainReadSchema):
    type: Literal["key-auth"] = "key-auth"
    key: str = Field(description="Shown in this response only, never again.")


class DeveloperAppWithKey(DeveloperAppRead):
    """The app with its key: the answer of its creation and of a rotation only."""

    credentials: list[Credential]
