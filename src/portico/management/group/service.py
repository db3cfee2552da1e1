"""Groups: sets of organisation members; the roles granted to a group apply to each member
(see ``access.effective_permissions``)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import utcnow
from portico.core.errors import Conflict, NotFound, ValidationFailed
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller, ensure_grantable
from portico.management.group.models import Group
from portico.management.group.repository import GroupRepository
from portico.management.group.schemas import GroupCreate, GroupRead, GroupUpdate
from portico.management.org.models import Membership
from portico.management.role.models import Role
from portico.management.role.repository import RoleRepository

UNKNOWN_ROLE = "unknown role"
NOT_A_MEMBER = "not a member of this organisation"


class GroupNotFound(NotFound):
    default_detail = "group not found"


def snapshot(group: Group) -> dict[str, Any]:
    return GroupRead.model_validate(group).model_dump(mode="json")


async def get(*, session: AsyncSession, caller: OrgCaller, group_id: uuid.UUID) -> Group:
    group = await GroupRepository(session).get_in_org(caller.org_id, group_id)
    if group is None:
        raise GroupNotFound()
    return group


async def list_(*, session: AsyncSession, caller: OrgCaller, query: ListQuery) -> Page[Group]:
    repository = GroupRepository(session)
    return await repository.page_in_org(caller.org_id, query)


async def create(*, session: AsyncSession, caller: OrgCaller, data: GroupCreate) -> Group:
    repository = GroupRepository(session)
    await _check_name(repository, caller.org_id, data.name, None)
    roles, members = await _resolve(session, caller.org_id, data.role_ids, data.member_ids)
    if members:
        ensure_grantable(caller, _permissions(roles or []))
    group = await repository.add(
        Group(
            id=uuid.uuid4(),
            org_id=caller.org_id,
            name=data.name,
            description=data.description,
            roles=roles or [],
            members=members or [],
        )
    )
    await caller.audit(session, "group.create", group.id, after=snapshot(group))
    return group


async def update(
    *, session: AsyncSession, caller: OrgCaller, group_id: uuid.UUID, data: GroupUpdate
) -> Group:
    repository = GroupRepository(session)
    group = await get(session=session, caller=caller, group_id=group_id)
    before = snapshot(group)
    await _check_name(repository, caller.org_id, data.name, group.id)
    roles, members = await _resolve(session, caller.org_id, data.role_ids, data.member_ids)
    _check_grants(caller, group, roles, members)
    if data.name is not None:
        group.name = data.name
    if data.description is not None:
        group.description = data.description
    if roles is not None:
        group.roles = roles
    if members is not None:
        group.members = members
    if roles is not None or members is not None:
        # link-table changes leave the group's row alone, so its onupdate would not fire
        group.updated_at = utcnow()
    await session.flush()
    await session.refresh(group)
    await caller.audit(session, "group.update", group.id, before=before, after=snapshot(group))
    return group


async def delete(*, session: AsyncSession, caller: OrgCaller, group_id: uuid.UUID) -> None:
    group = await get(session=session, caller=caller, group_id=group_id)
    before = snapshot(group)
    await GroupRepository(session).delete(group)
    await caller.audit(session, "group.delete", group_id, before=before)


def _permissions(roles: list[Role]) -> set[str]:
    return {p for role in roles for p in role.permissions or []}


def _check_grants(
    caller: OrgCaller, group: Group, roles: list[Role] | None, members: list[Membership] | None
) -> None:
    """New roles grant their permissions to every member; new members receive every role."""
    kept_roles = group.roles if roles is None else roles
    new_roles = [r for r in roles or [] if r not in group.roles]
    new_members = [m for m in members or [] if m not in group.members]
    if new_members:
        ensure_grantable(caller, _permissions(kept_roles))
    elif new_roles and (group.members if members is None else members):
        ensure_grantable(caller, _permissions(new_roles))


async def _resolve(
    session: AsyncSession,
    org_id: uuid.UUID,
    role_ids: list[uuid.UUID] | None,
    member_ids: list[uuid.UUID] | None,
) -> tuple[list[Role] | None, list[Membership] | None]:
    """Role ids → roles of this org; user ids → their memberships in this org. Anything else
    (another org's role, a user outside the org, an id naming nothing) is a 400 at its index;
    all offending entries are reported at once."""
    errors: list[dict[str, str]] = []
    roles: list[Role] | None = None
    members: list[Membership] | None = None
    if role_ids is not None:
        found = {r.id: r for r in await RoleRepository(session).many_in_org(org_id, role_ids)}
        errors += _missing("roleIds", role_ids, found, UNKNOWN_ROLE)
        roles = [found[i] for i in role_ids if i in found]
    if member_ids is not None:
        rows = await GroupRepository(session).memberships(org_id, member_ids)
        by_user = {m.user_id: m for m in rows}
        errors += _missing("memberIds", member_ids, by_user, NOT_A_MEMBER)
        members = [by_user[i] for i in member_ids if i in by_user]
    if errors:
        raise ValidationFailed(errors)
    return roles, members


def _missing(
    field: str, ids: list[uuid.UUID], found: dict[uuid.UUID, Any], detail: str
) -> list[dict[str, str]]:
    return [
        {"pointer": f"/{field}/{index}", "detail": f"$.{field}[{index}]: {detail}"}
        for index, value in enumerate(ids)
        if value not in found
    ]


async def _check_name(
    repository: GroupRepository, org_id: uuid.UUID, name: str | None, group_id: uuid.UUID | None
) -> None:
    if name is not None and await repository.name_taken(org_id, name, except_id=group_id):
        raise Conflict(f"a group named '{name}' already exists")
