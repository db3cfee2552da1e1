"""Site-wide permissions and site roles as the admin API shows them.

Both are defined in code (``marketplace.modules`` and ``marketplace.permissions``), not
stored: what exists is what the installed modules declare, so a role never lists a
permission of a module that is not installed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from portico.core.errors import NotFound
from portico.marketplace.modules import Module
from portico.marketplace.permissions import SITE_ROLES, Permission, SiteRole
from portico.marketplace.role.schemas import (
    ModulePermissions,
    PermissionRead,
    PermissionRef,
    RoleRead,
    RoleSummary,
)


class SiteRoleNotFound(NotFound):
    default_detail = "site role not found"


def catalogue(
    *, modules: Iterable[Module], available: Mapping[str, Permission]
) -> list[ModulePermissions]:
    """The installed permissions grouped by declaring module, in module order; a module
    that declares none is left out (nothing to show)."""
    out = []
    for module in modules:
        declared = [p for p in module.permissions if p.key in available]
        if declared:
            out.append(
                ModulePermissions(
                    module=module.name,
                    label=module.label,
                    permissions=[PermissionRead.model_validate(p) for p in declared],
                )
            )
    return out


def granted(role: SiteRole, available: Mapping[str, Permission]) -> list[Permission]:
    """What ``role`` holds among the installed permissions, in catalogue order (the order
    ``available`` was built in: module by module), so lists read like ``/permissions``."""
    held = role.permissions(available)
    return [p for key, p in available.items() if key in held]


def list_roles(*, available: Mapping[str, Permission]) -> list[RoleSummary]:
    return [
        RoleSummary(
            id=role.id,
            label=role.label,
            weight=role.weight,
            is_admin=role.is_admin,
            permissions=[p.key for p in granted(role, available)],
        )
        for role in sorted(SITE_ROLES, key=lambda r: r.weight)
    ]


def get_role(*, role_id: str, available: Mapping[str, Permission]) -> RoleRead:
    role = next((r for r in SITE_ROLES if r.id == role_id), None)
    if role is None:
        raise SiteRoleNotFound()
    return RoleRead(
        id=role.id,
        label=role.label,
        weight=role.weight,
        is_admin=role.is_admin,
        permissions=[PermissionRef(key=p.key, title=p.title) for p in granted(role, available)],
    )
