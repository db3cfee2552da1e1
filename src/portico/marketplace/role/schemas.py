"""HTTP shapes of the site-wide permissions and site roles (snake_case)."""

from __future__ import annotations

from pydantic import Field

from portico.core.schema import PlainReadSchema


class PermissionRead(PlainReadSchema):
    key: str = Field(description="The permission string, exactly as roles grant it.")
    title: str
    description: str
    restrict_access: bool = Field(
        description="Dangerous to grant: the admin UI warns before giving it to a role."
    )


class ModulePermissions(PlainReadSchema):
    module: str = Field(description="The installed module that declares these permissions.")
    label: str
    permissions: list[PermissionRead]


class PermissionRef(PlainReadSchema):
    key: str
    title: str


class RoleSummary(PlainReadSchema):
    id: str = Field(description="Machine name, e.g. 'marketplace_admin'.")
    label: str
    weight: int = Field(description="Position in the admin UI (lowest first).")
    is_admin: bool = Field(
        description="Holds every permission of every installed module, present and future."
    )
    permissions: list[str] = Field(
        description="Keys of the installed permissions the role grants, in catalogue order."
    )


class RoleRead(PlainReadSchema):
    id: str
    label: str
    weight: int
    is_admin: bool
    permissions: list[PermissionRef] = Field(
        description="The installed permissions the role grants, with their titles."
    )


class RoleRef(PlainReadSchema):
    id: str
    label: str
