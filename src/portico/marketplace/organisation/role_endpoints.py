"""Organisation roles and permissions (permission ``manage org members``): the catalogue of
organisation permissions, an organisation's roles (the predefined ones cannot be edited or
deleted: 409), and the roles of a member (direct, team-inherited, the effective union).

Routed before ``endpoints.py``'s router: ``/organisations/permissions`` is not a
``/organisations/{group}``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.envelope import Envelope
from portico.core.openapi import problems
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.organisation import roles as roles_service
from portico.marketplace.organisation.roles import (
    NotACustomRole,
    PredefinedRoleImmutable,
    RoleLabelTaken,
)
from portico.marketplace.organisation.schemas import (
    MemberRoles,
    MemberRolesReplace,
    PermissionCategory,
    RoleCatalogue,
    RoleCreate,
    RoleRead,
    RoleUpdate,
)
from portico.marketplace.organisation.service import MembershipNotFound, OrganisationNotFound

router = APIRouter(prefix="/organisations", tags=["organisation roles"])

MemberManager = Annotated[SiteCaller, Depends(require("manage org members"))]
_IMMUTABLE = problems(PredefinedRoleImmutable, detail="The role is predefined.")
_LABEL_TAKEN = problems(RoleLabelTaken, detail="The organisation has a role with this label.")
_NOT_CUSTOM = problems(NotACustomRole, detail="The role is predefined, not a custom one.")


@router.get("/permissions", response_model=Envelope[list[PermissionCategory]])
async def list_organisation_permissions(
    _caller: MemberManager,
) -> Envelope[list[PermissionCategory]]:
    """What a custom role may grant, grouped by category."""
    return Envelope[list[PermissionCategory]](data=roles_service.permission_catalogue())


@router.get("/{group}/roles", response_model=Envelope[RoleCatalogue])
async def list_organisation_roles(
    group: str, _caller: MemberManager, session: SessionDep
) -> Envelope[RoleCatalogue]:
    """The predefined roles and the organisation's custom roles (``predefined`` tells them
    apart), with the permission keys a custom role may grant."""
    data = await roles_service.catalogue(
        session=session, organisation_id=parse_uuid(group, OrganisationNotFound)
    )
    return Envelope[RoleCatalogue](data=data)


@router.post(
    "/{group}/roles", response_model=Envelope[RoleRead], status_code=201, responses=_LABEL_TAKEN
)
async def create_organisation_role(
    group: str,
    body: RoleCreate,
    request: Request,
    response: Response,
    caller: MemberManager,
    session: SessionDep,
) -> Envelope[RoleRead]:
    role = await roles_service.create(
        session=session,
        caller=caller,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        data=body,
    )
    root = request.scope.get("root_path", "")
    response.headers["Location"] = f"{root}/organisations/{group}/roles/{role.id}"
    return Envelope[RoleRead](data=role)


@router.get("/{group}/roles/{role}", response_model=Envelope[RoleRead])
async def get_organisation_role(
    group: str, role: str, _caller: MemberManager, session: SessionDep
) -> Envelope[RoleRead]:
    """One role: a custom role's UUID, or a predefined role's id."""
    data = await roles_service.get(
        session=session, organisation_id=parse_uuid(group, OrganisationNotFound), role=role
    )
    return Envelope[RoleRead](data=data)


@router.patch(
    "/{group}/roles/{role}",
    response_model=Envelope[RoleRead],
    responses=problems(
        PredefinedRoleImmutable,
        RoleLabelTaken,
        detail="The role is predefined, or the organisation has another role with this label.",
    ),
)
async def update_organisation_role(
    group: str, role: str, body: RoleUpdate, caller: MemberManager, session: SessionDep
) -> Envelope[RoleRead]:
    """Change a custom role's label or permissions (the list replaces the role's); a
    predefined role is refused (409)."""
    data = await roles_service.update(
        session=session,
        caller=caller,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        role=role,
        data=body,
    )
    return Envelope[RoleRead](data=data)


@router.delete(
    "/{group}/roles/{role}", status_code=204, response_class=Response, responses=_IMMUTABLE
)
async def delete_organisation_role(
    group: str, role: str, caller: MemberManager, session: SessionDep
) -> Response:
    """Delete a custom role and every assignment of it; a predefined role is refused
    (409)."""
    await roles_service.delete(
        session=session,
        caller=caller,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        role=role,
    )
    return Response(status_code=204)


@router.get("/{group}/members/{relationship}/roles", response_model=Envelope[MemberRoles])
async def get_member_roles(
    group: str, relationship: str, _caller: MemberManager, session: SessionDep
) -> Envelope[MemberRoles]:
    """Direct roles, roles inherited from the member's teams, and the effective union of
    their permissions."""
    data = await roles_service.member_roles(
        session=session,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        membership_id=parse_uuid(relationship, MembershipNotFound),
    )
    return Envelope[MemberRoles](data=data)


@router.patch("/{group}/members/{relationship}/roles", response_model=Envelope[MemberRoles])
async def replace_member_roles(
    group: str,
    relationship: str,
    body: MemberRolesReplace,
    caller: MemberManager,
    session: SessionDep,
) -> Envelope[MemberRoles]:
    """Replace the member's direct roles (predefined and custom); team-inherited roles are
    not affected."""
    data = await roles_service.replace_member_roles(
        session=session,
        caller=caller,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        membership_id=parse_uuid(relationship, MembershipNotFound),
        roles=body.roles,
    )
    return Envelope[MemberRoles](data=data)


@router.post(
    "/{group}/members/{relationship}/custom-roles/{role}",
    response_model=Envelope[MemberRoles],
    responses=_NOT_CUSTOM,
)
async def assign_member_custom_role(
    group: str, relationship: str, role: str, caller: MemberManager, session: SessionDep
) -> Envelope[MemberRoles]:
    """Give the member a custom role (again: no change)."""
    data = await roles_service.assign_custom_role(
        session=session,
        caller=caller,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        membership_id=parse_uuid(relationship, MembershipNotFound),
        role=role,
    )
    return Envelope[MemberRoles](data=data)


@router.delete(
    "/{group}/members/{relationship}/custom-roles/{role}",
    status_code=204,
    response_class=Response,
    responses=_NOT_CUSTOM,
)
async def unassign_member_custom_role(
    group: str, relationship: str, role: str, caller: MemberManager, session: SessionDep
) -> Response:
    """Take a custom role from the member (404 when not held directly)."""
    await roles_service.unassign_custom_role(
        session=session,
        caller=caller,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        membership_id=parse_uuid(relationship, MembershipNotFound),
        role=role,
    )
    return Response(status_code=204)
