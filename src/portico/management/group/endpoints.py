"""group domain: groups of organisation members and the roles granted to them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.group import service as group_service
from portico.management.group.schemas import GroupCreate, GroupRead, GroupUpdate
from portico.management.group.service import GroupNotFound
from portico.management.pages import PageRead, page_of

router = APIRouter(prefix="/api/orgs/{orgId}/groups", tags=["groups"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt"}),
    default_sort="name",
    filterable=frozenset({"name"}),
)
# Groups are part of access control: read and managed with the role permissions.
Reader = Annotated[OrgCaller, Depends(require("role.read"))]
Manager = Annotated[OrgCaller, Depends(require("role.manage"))]


@router.get("", response_model=PageRead[GroupRead])
async def list_groups(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[GroupRead]:
    page = await group_service.list_(session=session, caller=caller, query=query)
    return page_of(page, GroupRead)


@router.post(
    "",
    response_model=GroupRead,
    status_code=201,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def create_group(body: GroupCreate, caller: Manager, session: SessionDep) -> GroupRead:
    group = await group_service.create(session=session, caller=caller, data=body)
    return GroupRead.model_validate(group)


@router.get("/{groupId}", response_model=GroupRead)
async def get_group(groupId: str, caller: Reader, session: SessionDep) -> GroupRead:
    group = await group_service.get(
        session=session, caller=caller, group_id=parse_id(groupId, GroupNotFound)
    )
    return GroupRead.model_validate(group)


@router.patch(
    "/{groupId}",
    response_model=GroupRead,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def update_group(
    groupId: str, body: GroupUpdate, caller: Manager, session: SessionDep
) -> GroupRead:
    group = await group_service.update(
        session=session, caller=caller, group_id=parse_id(groupId, GroupNotFound), data=body
    )
    return GroupRead.model_validate(group)


@router.delete("/{groupId}", status_code=204)
async def delete_group(groupId: str, caller: Manager, session: SessionDep) -> Response:
    await group_service.delete(
        session=session, caller=caller, group_id=parse_id(groupId, GroupNotFound)
    )
    return Response(status_code=204)
