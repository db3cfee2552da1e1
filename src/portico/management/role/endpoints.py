"""role domain: the permission catalogue and the organisation's roles."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict, ValidationFailed
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.pages import PageRead, page_of
from portico.management.role import service as role_service
from portico.management.role.schemas import (
    PermissionCatalogueRead,
    RoleCreate,
    RoleRead,
    RoleUpdate,
)
from portico.management.role.service import RoleNotFound

# The org is the prefix: this router serves both /permissions and /roles.
router = APIRouter(prefix="/api/orgs/{orgId}", tags=["roles"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt"}),
    default_sort="name",
    filterable=frozenset({"name", "predefined"}),
)
Reader = Annotated[OrgCaller, Depends(require("role.read"))]
Manager = Annotated[OrgCaller, Depends(require("role.manage"))]


def no_query_parameters(request: Request) -> None:
    """The catalogue is small and returned whole; a parameter (``?page=2``) would suggest
    otherwise, so any is refused as on the paginated lists."""
    errors = [
        {"parameter": key, "detail": f"{key}: unknown query parameter"}
        for key in dict.fromkeys(request.query_params.keys())
    ]
    if errors:
        raise ValidationFailed(errors)


@router.get("/permissions", response_model=PermissionCatalogueRead)
async def list_permissions(
    caller: Reader, _no_query: None = Depends(no_query_parameters)
) -> PermissionCatalogueRead:
    return role_service.catalogue()


@router.get("/roles", response_model=PageRead[RoleRead])
async def list_roles(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[RoleRead]:
    page = await role_service.list_(session=session, caller=caller, query=query)
    return page_of(page, RoleRead)


@router.post(
    "/roles",
    response_model=RoleRead,
    status_code=201,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def create_role(body: RoleCreate, caller: Manager, session: SessionDep) -> RoleRead:
    role = await role_service.create(session=session, caller=caller, data=body)
    return RoleRead.model_validate(role)


@router.get("/roles/{roleId}", response_model=RoleRead)
async def get_role(roleId: str, caller: Reader, session: SessionDep) -> RoleRead:
    role = await role_service.get(
        session=session, caller=caller, role_id=parse_id(roleId, RoleNotFound)
    )
    return RoleRead.model_validate(role)


@router.patch(
    "/roles/{roleId}",
    response_model=RoleRead,
    responses=problems(Conflict, detail="A predefined role cannot change, or the name is taken."),
)
async def update_role(
    roleId: str, body: RoleUpdate, caller: Manager, session: SessionDep
) -> RoleRead:
    role = await role_service.update(
        session=session, caller=caller, role_id=parse_id(roleId, RoleNotFound), data=body
    )
    return RoleRead.model_validate(role)


@router.delete(
    "/roles/{roleId}",
    status_code=204,
    responses=problems(Conflict, detail="A predefined role cannot be deleted."),
)
async def delete_role(roleId: str, caller: Manager, session: SessionDep) -> Response:
    await role_service.delete(
        session=session, caller=caller, role_id=parse_id(roleId, RoleNotFound)
    )
    return Response(status_code=204)
