from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Self

from pydantic import AfterValidator, Field, field_validator, model_validator

from portico.core.schema import ReadSchema, WriteSchema
from portico.core.validation import invalid
from portico.management.role.permissions import PERMISSIONS

Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")]
Description = Annotated[str, Field(max_length=1000)]


def _known_permission(key: str) -> str:
    if key not in PERMISSIONS:
        raise ValueError(f"unknown permission '{key}'")
    return key


PermissionKey = Annotated[str, AfterValidator(_known_permission)]
# A role can at most hold the whole catalogue; the bound keeps a hostile body small.
PermissionKeys = Annotated[list[PermissionKey], Field(max_length=len(PERMISSIONS))]


def _refuse_duplicates(permissions: list[str] | None) -> None:
    """A repeated key is refused rather than folded away: it is almost always a client bug
    (a copy-paste, a merge of two lists), and the pointer shows which entry repeats."""
    seen: set[str] = set()
    for index, key in enumerate(permissions or []):
        if key in seen:
            invalid(("permissions", index), f"duplicate permission '{key}'", key)
        seen.add(key)


class RoleCreate(WriteSchema):
    name: Name = Field(description="Unique within the organisation.")
    description: Description = ""
    permissions: PermissionKeys = Field(
        description="Permission keys from GET /api/orgs/{orgId}/permissions."
    )

    @model_validator(mode="after")
    def _unique_permissions(self) -> Self:
        _refuse_duplicates(self.permissions)
        return self


class RoleUpdate(WriteSchema):
    name: Name | None = None
    description: Description | None = None
    permissions: PermissionKeys | None = Field(None, description="Replaces the whole set.")

    @model_validator(mode="after")
    def _unique_permissions(self) -> Self:
        _refuse_duplicates(self.permissions)
        return self


class RoleRead(ReadSchema):
    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    description: str
    permissions: list[str]
    predefined: bool = Field(description="Created with the organisation; cannot be changed.")
    created_at: datetime
    updated_at: datetime

    @field_validator("permissions")
    @classmethod
    def _sorted(cls, permissions: list[str]) -> list[str]:
        return sorted(permissions)


class PermissionRead(ReadSchema):
    key: str = Field(description="e.g. 'api.create'.")
    label: str


class PermissionCatalogueRead(ReadSchema):
    items: list[PermissionRead]
