from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, field_validator, model_validator

from portico.core.schema import ReadSchema, WriteSchema, no_control_characters, plain_text
from portico.core.validation import invalid

MAX_APIS = 100
#: the largest quota limit and interval: counters are signed 64-bit integers
MAX_COUNT = 2**63 - 1

#: as an API's name (``ResourceName``), within the column's 64 characters
ProductName = Annotated[
    str,
    Field(min_length=1, max_length=64, pattern=r"^\S(.*\S)?$"),
    AfterValidator(no_control_characters),
]
DisplayName = Annotated[
    str,
    Field(min_length=1, max_length=128, pattern=r"^\S(.*\S)?$"),
    AfterValidator(no_control_characters),
]
Description = Annotated[str, Field(max_length=1024), AfterValidator(plain_text)]
# JSON has no UUID type: a UUID string is the strict form of an id.
ApiId = Annotated[uuid.UUID, Field(strict=False)]
ApiIds = Annotated[
    list[ApiId],
    Field(
        max_length=MAX_APIS,
        description="Ids of APIs of the organisation, each at most once.",
    ),
]
IntervalUnit = Literal["second", "minute", "hour", "day", "month"]
KeyScope = Literal["app", "developer"]

_NAME = "Unique within the organisation."
_DISPLAY = "For people; the name when not given."


class Quota(WriteSchema):
    """Its keys are snake_case (``interval_unit``, ``key_scope``), as scripts send them."""

    limit: int = Field(le=MAX_COUNT, description="Requests per window, at least 1; -1: unlimited.")
    interval: int = Field(ge=1, le=MAX_COUNT, description="Window length, in interval_unit.")
    interval_unit: IntervalUnit = Field(alias="interval_unit")
    key_scope: KeyScope = Field(
        "app",
        alias="key_scope",
        description="Who the quota counts for: each app (default), or each developer across "
        "their apps.",
    )

    @field_validator("limit")
    @classmethod
    def _limit(cls, value: int) -> int:
        if value < 1 and value != -1:
            raise ValueError("must be at least 1, or -1 for unlimited")
        return value


_QUOTA_KEY_SCOPE = (
    "The seed product's name of quota.key_scope (sent beside quota, or alone on a change to "
    "set the stored quota's); giving both with different values is refused."
)


def _key_scope_synonym(
    quota: Quota | None, key_scope: KeyScope | None, *, needs_quota: bool
) -> None:
    """``quota_key_scope`` folded into ``quota.key_scope`` (the seed product's field)."""
    if key_scope is None:
        return
    if quota is None:
        if needs_quota:
            invalid(("quota_key_scope",), "needs a quota")
        return
    if "key_scope" in quota.model_fields_set and quota.key_scope != key_scope:
        invalid(
            ("quota_key_scope",),
            f"{key_scope!r} disagrees with quota.key_scope {quota.key_scope!r}; give one",
        )
    quota.key_scope = key_scope


class ProductCreate(WriteSchema):
    name: ProductName = Field(description=_NAME)
    display_name: DisplayName | None = Field(None, description=_DISPLAY)
    description: Description = ""
    api_ids: ApiIds = Field(default_factory=list)
    quota: Quota | None = Field(
        None, description="Without a quota, traffic through the product is refused (403)."
    )
    quota_key_scope: KeyScope | None = Field(
        None, alias="quota_key_scope", description=_QUOTA_KEY_SCOPE
    )

    @model_validator(mode="after")
    def _synonym(self) -> Self:
        _key_scope_synonym(self.quota, self.quota_key_scope, needs_quota=True)
        return self


class ProductUpdate(WriteSchema):
    """Any subset; ``quota: null`` removes the quota."""

    name: ProductName | None = Field(None, description=_NAME)
    display_name: DisplayName | None = None
    description: Description | None = None
    api_ids: ApiIds | None = Field(None, description="Replaces the product's APIs.")
    quota: Quota | None = Field(None, description="null removes the quota.")
    quota_key_scope: KeyScope | None = Field(
        None, alias="quota_key_scope", description=_QUOTA_KEY_SCOPE
    )

    @model_validator(mode="after")
    def _synonym(self) -> Self:
        if "quota" in self.model_fields_set:
            _key_scope_synonym(self.quota, self.quota_key_scope, needs_quota=True)
        return self


class QuotaRead(ReadSchema):
    limit: int
    interval: int
    interval_unit: str = Field(alias="interval_unit")
    key_scope: str = Field(alias="key_scope")


class ProductRead(ReadSchema):
    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    display_name: str
    description: str
    api_ids: list[uuid.UUID]
    quota: QuotaRead | None
    environments: list[uuid.UUID] = Field(
        description="Ids of the environments it is deployed in, in id order."
    )
    created_at: datetime
    updated_at: datetime


class ProductDeploymentRead(ReadSchema):
    product_id: uuid.UUID
    environment_id: uuid.UUID
    deployed_at: datetime
