"""``/permissions`` and ``/roles``: the site-wide permission catalogue and the site roles.

Both are small, fixed sets returned whole in ``{"data": [...]}`` (no paging); they read no
query parameter, so any one is refused (``core/query.py``, as on every route): ``?page=2``
cannot suggest otherwise.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from portico.core.envelope import Envelope
from portico.marketplace.access import SiteCaller, require
from portico.marketplace.role import service as role_service
from portico.marketplace.role.schemas import ModulePermissions, RoleRead, RoleSummary

router = APIRouter(tags=["permissions and roles"])

PermissionAdmin = Annotated[SiteCaller, Depends(require("administer permissions"))]


def _available(request: Request) -> Any:
    return request.app.state.permissions


@router.get("/permissions", response_model=Envelope[list[ModulePermissions]])
async def list_permissions(
    request: Request, _caller: PermissionAdmin
) -> Envelope[list[ModulePermissions]]:
    """Site-wide permissions of the installed modules, grouped by declaring module."""
    return Envelope(
        data=role_service.catalogue(
            modules=request.app.state.modules, available=_available(request)
        )
    )


@router.get("/roles", response_model=Envelope[list[RoleSummary]])
async def list_roles(request: Request, _caller: PermissionAdmin) -> Envelope[list[RoleSummary]]:
    """Site roles in the admin UI's weight order, each with the permission keys it grants."""
    return Envelope(data=role_service.list_roles(available=_available(request)))


@router.get("/roles/{user_role}", response_model=Envelope[RoleRead])
async def get_role(
    user_role: str, request: Request, _caller: PermissionAdmin
) -> Envelope[RoleRead]:
    """One site role (by id, e.g. ``marketplace_admin``), its permissions with their titles."""
    return Envelope(data=role_service.get_role(role_id=user_role, available=_available(request)))
