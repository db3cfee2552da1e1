from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Self

from pydantic import Field, model_validator

from portico.core.schema import ReadSchema, WriteSchema
from portico.core.validation import invalid
from portico.management.group.models import Group

Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")]
Description = Annotated[str, Field(max_length=1000)]
# Request schemas are strict, and strict UUIDs refuse the strings JSON carries them as.
Id = Annotated[uuid.UUID, Field(strict=False)]
RoleIds = Annotated[list[Id], Field(max_length=100)]
MemberIds = Annotated[list[Id], Field(max_length=1000)]


def _refuse_duplicates(field: str, ids: list[uuid.UUID] | None, what: str) -> None:
    seen: set[uuid.UUID] = set()
    for index, value in enumerate(ids or []):
        if value in seen:
            invalid((field, index), f"duplicate {what} '{value}'", str(value))
        seen.add(value)


class GroupCreate(WriteSchema):
    name: Name = Field(description="Unique within the organisation.")
    description: Description = ""
    role_ids: RoleIds = Field(
        default_factory=list, description="Roles of this organisation granted to every member."
    )
    member_ids: MemberIds = Field(
        default_factory=list, description="User ids of members of this organisation."
    )

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        _refuse_duplicates("roleIds", self.role_ids, "role id")
        _refuse_duplicates("memberIds", self.member_ids, "member id")
        return self


class GroupUpdate(WriteSchema):
    name: Name | None = None
    description: Description | None = None
    role_ids: RoleIds | None = Field(None, description="Replaces the group's roles.")
    member_ids: MemberIds | None = Field(None, description="Replaces the group's members.")

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        _refuse_duplicates("roleIds", self.role_ids, "role id")
        _refuse_duplicates("memberIds", self.member_ids, "member id")
        return self


class GroupRead(ReadSchema):
    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    description: str
    role_ids: list[uuid.UUID]
    member_ids: list[uuid.UUID] = Field(description="User ids (not membership ids).")
    created_at: datetime
    updated_at: datetime

    @model_validator(mode="before")
    @classmethod
    def _from_group(cls, value: Any) -> Any:
        """The table links memberships; clients know users. Ids are sorted so that the same
        group always reads the same (the link tables keep no order)."""
        if not isinstance(value, Group):
            return value
        return {
            "id": value.id,
            "org_id": value.org_id,
            "name": value.name,
            "description": value.description,
            "role_ids": sorted((r.id for r in value.roles), key=str),
            "member_ids": sorted((m.user_id for m in value.members), key=str),
            "created_at": value.created_at,
            "updated_at": value.updated_at,
        }
