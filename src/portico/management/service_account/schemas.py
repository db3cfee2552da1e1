from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Self

from pydantic import AwareDatetime, Field, model_validator

from portico.core.schema import ReadSchema, WriteSchema
from portico.core.validation import invalid
from portico.management.service_account.models import ServiceAccount

Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")]
# Request schemas are strict, and strict UUIDs and datetimes refuse the strings JSON carries
# them as.
Id = Annotated[uuid.UUID, Field(strict=False)]
RoleIds = Annotated[list[Id], Field(max_length=100)]
Expiry = Annotated[AwareDatetime, Field(strict=False)]


def _refuse_duplicates(ids: list[uuid.UUID] | None) -> None:
    seen: set[uuid.UUID] = set()
    for index, value in enumerate(ids or []):
        if value in seen:
            invalid(("roleIds", index), f"duplicate role id '{value}'", str(value))
        seen.add(value)


class ServiceAccountCreate(WriteSchema):
    name: Name = Field(description="Unique within the organisation, e.g. the integration's.")
    role_ids: RoleIds = Field(
        description="Roles of this organisation: the token may do what they permit (the "
        "predefined Integration role grants what a marketplace connector needs)."
    )
    expires_at: Expiry | None = Field(
        None,
        description="When the token stops working (ISO 8601 with a time zone); never if absent.",
    )

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        _refuse_duplicates(self.role_ids)
        return self


class ServiceAccountUpdate(WriteSchema):
    name: Name | None = None
    role_ids: RoleIds | None = Field(None, description="Replaces the account's roles.")
    expires_at: Expiry | None = Field(
        None, description="A new expiry; `null` removes it (the token no longer expires)."
    )

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        _refuse_duplicates(self.role_ids)
        return self


class ServiceAccountRead(ReadSchema):
    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    role_ids: list[uuid.UUID]
    expires_at: datetime | None = Field(description="None: the token does not expire.")
    last_used_at: datetime | None = Field(
        description="When the token last authenticated a request (whatever its answer), to "
        "the minute; None: never used."
    )
    created_at: datetime
    updated_at: datetime

    @model_validator(mode="before")
    @classmethod
    def _from_account(cls, value: Any) -> Any:
        """Role ids sorted, so that the same account always reads the same."""
        if not isinstance(value, ServiceAccount):
            return value
        return {
            "id": value.id,
            "org_id": value.org_id,
            "name": value.name,
            "role_ids": sorted((r.id for r in value.roles), key=str),
            "expires_at": value.expires_at,
            "last_used_at": value.last_used_at,
            "created_at": value.created_at,
            "updated_at": value.updated_at,
        }


class ServiceAccountIssued(ServiceAccountRead):
    token: str = Field(
        description="The bearer token, shown once (only its SHA-256 is kept): send it as "
        "`Authorization: Bearer <token>`. Lost, it cannot be recovered: delete the account "
        "and create another."
    )
