"""Users of an organisation: invited by email, given roles and groups, removed; every change
audited.

A "user" here is a membership seen through its account. The account (email, password) is
global and may belong to several organisations, so removing a user ends the membership only.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.account import AccountStatus, User, find_by_email, normalise_email
from portico.core.clock import Clock
from portico.core.errors import Conflict, NotFound, ValidationFailed
from portico.core.pagination import ListQuery, Page
from portico.core.tokens import hash_opaque_token, new_opaque_token
from portico.core.validation import json_path, json_pointer
from portico.management.access import OrgCaller, ensure_grantable
from portico.management.group.models import Group
from portico.management.org.models import Membership
from portico.management.role.models import Role
from portico.management.role.permissions import ADMINISTRATOR_ROLE
from portico.management.user.models import Invitation
from portico.management.user.repository import Member, MemberRepository
from portico.management.user.schemas import UserInvite, UserRead, UserUpdate

INVITATION_TTL = timedelta(days=7)
ALREADY_MEMBER = "user is already a member of this organisation"
ALREADY_ACCEPTED = "user has already accepted"
LAST_ADMINISTRATOR = "the organisation must keep at least one Administrator"


class UserNotFound(NotFound):
    default_detail = "user not found"


@dataclass(frozen=True)
class IssuedInvitation:
    token: str  # shown once, never stored or audited
    expires_at: datetime


def snapshot(member: Member) -> dict[str, Any]:
    return UserRead.model_validate(member).model_dump(mode="json")


async def list_(*, session: AsyncSession, caller: OrgCaller, query: ListQuery) -> Page[Member]:
    repository = MemberRepository(session)
    statement = repository.in_org(caller.org_id)
    if "email" in query.filters:
        statement = statement.where(User.email == normalise_email(query.filters["email"]))
    if "status" in query.filters:
        try:
            status = AccountStatus(query.filters["status"])
        except ValueError:
            allowed = ", ".join(s.value for s in AccountStatus)
            raise ValidationFailed(
                [{"parameter": "status", "detail": f"status: must be one of {allowed}"}]
            ) from None
        if status is AccountStatus.INVITED:
            statement = statement.where(Membership.accepted_at.is_(None))
        else:
            statement = statement.where(User.status == status, Membership.accepted_at.is_not(None))
    page = await repository.page(statement, query)
    items = await repository.members(caller.org_id, page.items)
    return Page(items=items, page=page.page, size=page.size, total=page.total)


async def get(*, session: AsyncSession, caller: OrgCaller, user_id: uuid.UUID) -> Member:
    repository = MemberRepository(session)
    return await _member(repository, caller.org_id, await _membership(repository, caller, user_id))


async def invite(
    *, session: AsyncSession, caller: OrgCaller, data: UserInvite, clock: Clock
) -> tuple[Member, IssuedInvitation]:
    repository = MemberRepository(session)
    roles, groups = await _resolve(repository, caller.org_id, data.role_ids, data.group_ids)
    roles, groups = roles or [], groups or []
    _check_grantable(caller, roles, groups)
    user = await find_by_email(session, data.email)
    if user is None:
        user = User(
            id=uuid.uuid4(),
            email=data.email,
            display_name=data.display_name or "",
            password_hash=None,
            status=AccountStatus.INVITED,
        )
        session.add(user)
    elif await repository.get_in_org(caller.org_id, user.id) is not None:
        raise Conflict(ALREADY_MEMBER)
    # An existing account is added as it is: its password and name are its owner's.
    membership = Membership(
        id=uuid.uuid4(), org_id=caller.org_id, user_id=user.id, user=user, roles=roles
    )
    await repository.add(membership)
    await _set_groups(repository, membership, groups)
    issued = await _issue_invitation(repository, caller, user.id, clock)
    member = await _member(repository, caller.org_id, membership)
    await caller.audit(session, "user.invite", user.id, after=snapshot(member))
    return member, issued


async def update(
    *, session: AsyncSession, caller: OrgCaller, user_id: uuid.UUID, data: UserUpdate
) -> Member:
    repository = MemberRepository(session)
    membership = await _membership(repository, caller, user_id)
    before = snapshot(await _member(repository, caller.org_id, membership))
    roles, groups = await _resolve(repository, caller.org_id, data.role_ids, data.group_ids)
    # Only what is newly granted needs the caller's own permissions (see _check_grantable).
    held = {r.id for r in membership.roles}
    current = {g.id for g in await repository.groups_of(membership.id)}
    _check_grantable(
        caller,
        [r for r in roles or [] if r.id not in held],
        [g for g in groups or [] if g.id not in current],
    )
    if roles is not None:
        await _keep_an_administrator(
            repository, caller.org_id, membership, keeps=any(map(_is_administrator, roles))
        )
        membership.roles = roles
    if groups is not None:
        await _set_groups(repository, membership, groups)
    if data.display_name is not None:
        membership.user.display_name = data.display_name
    await session.flush()
    member = await _member(repository, caller.org_id, membership)
    await caller.audit(session, "user.update", user_id, before=before, after=snapshot(member))
    return member


async def remove(*, session: AsyncSession, caller: OrgCaller, user_id: uuid.UUID) -> None:
    """End the membership; the account stays (it may belong to other organisations)."""
    repository = MemberRepository(session)
    membership = await _membership(repository, caller, user_id)
    before = snapshot(await _member(repository, caller.org_id, membership))
    await _keep_an_administrator(repository, caller.org_id, membership, keeps=False)
    await _set_groups(repository, membership, [])
    await repository.delete_pending_invitations(caller.org_id, user_id)
    await repository.delete(membership)
    await caller.audit(session, "user.remove", user_id, before=before)


async def reissue_invitation(
    *, session: AsyncSession, caller: OrgCaller, user_id: uuid.UUID, clock: Clock
) -> IssuedInvitation:
    """A new token for a member who has not set a password yet; the previous one stops
    working (lost link, or expired)."""
    repository = MemberRepository(session)
    membership = await _membership(repository, caller, user_id)
    if membership.accepted_at is not None:
        raise Conflict(ALREADY_ACCEPTED)
    status = membership.user.status
    if status not in (AccountStatus.INVITED, AccountStatus.ACTIVE):
        raise Conflict(f"the account of this user is {status.value}")
    issued = await _issue_invitation(repository, caller, user_id, clock)
    await caller.audit(
        session,
        "user.reinvite",
        user_id,
        after=snapshot(await _member(repository, caller.org_id, membership)),
        summary=f"invitation re-issued, expires {issued.expires_at.isoformat()}",
    )
    return issued


async def _membership(
    repository: MemberRepository, caller: OrgCaller, user_id: uuid.UUID
) -> Membership:
    membership = await repository.get_in_org(caller.org_id, user_id)
    if membership is None:
        raise UserNotFound()
    return membership


async def _member(
    repository: MemberRepository, org_id: uuid.UUID, membership: Membership
) -> Member:
    return (await repository.members(org_id, [membership]))[0]


async def _resolve(
    repository: MemberRepository,
    org_id: uuid.UUID,
    role_ids: list[uuid.UUID] | None,
    group_ids: list[uuid.UUID] | None,
) -> tuple[list[Role] | None, list[Group] | None]:
    """The org's roles and groups named by the request (``None`` stays "not given"); every
    id that names none of them is reported at once. Another organisation's role or group is
    as unknown here as one that does not exist."""
    roles = await repository.roles_in_org(org_id, role_ids or [])
    groups = await repository.groups_in_org(org_id, group_ids or [])
    role_by_id = {r.id: r for r in roles}
    group_by_id = {g.id: g for g in groups}
    errors = [
        *_unknown("roleIds", "role", role_ids or [], role_by_id),
        *_unknown("groupIds", "group", group_ids or [], group_by_id),
    ]
    if errors:
        raise ValidationFailed(errors)
    return (
        None if role_ids is None else [role_by_id[i] for i in role_ids],
        None if group_ids is None else [group_by_id[i] for i in group_ids],
    )


def _unknown(
    field: str, noun: str, ids: list[uuid.UUID], found: Mapping[uuid.UUID, object]
) -> list[dict[str, str]]:
    return [
        {
            "pointer": json_pointer((field, i)),
            "detail": f"{json_path((field, i))}: no {noun} {value} in this organisation",
        }
        for i, value in enumerate(ids)
        if value not in found
    ]


def _check_grantable(caller: OrgCaller, roles: list[Role], groups: list[Group]) -> None:
    """A caller grants only permissions they hold themselves, directly or through a group:
    otherwise ``user.manage`` alone would be a way to become Administrator."""
    ensure_grantable(
        caller,
        (p for role in [*roles, *(r for g in groups for r in g.roles)] for p in role.permissions),
    )


def _is_administrator(role: Role) -> bool:
    return role.predefined and role.name == ADMINISTRATOR_ROLE


async def _keep_an_administrator(
    repository: MemberRepository, org_id: uuid.UUID, membership: Membership, *, keeps: bool
) -> None:
    """Refuse to take the Administrator role from the last active member holding it. Only
    direct grants count: group roles change through the groups endpoints, which this guard
    cannot see, so an Administrator "through a group" is no guarantee that one remains."""
    counts = membership.accepted_at is not None and membership.user.status is AccountStatus.ACTIVE
    if keeps or not counts or not any(map(_is_administrator, membership.roles)):
        return
    administrator = await repository.lock_administrator_role(org_id)
    if administrator is not None and not await repository.count_active_holders(
        org_id, administrator.id, except_membership=membership.id
    ):
        raise Conflict(LAST_ADMINISTRATOR)


async def _set_groups(
    repository: MemberRepository, membership: Membership, groups: list[Group]
) -> None:
    wanted = {g.id for g in groups}
    current = await repository.groups_of(membership.id)
    for group in current:
        if group.id not in wanted:
            group.members.remove(membership)
    kept = {g.id for g in current}
    for group in groups:
        if group.id not in kept:
            group.members.append(membership)
    await repository.session.flush()


async def _issue_invitation(
    repository: MemberRepository, caller: OrgCaller, user_id: uuid.UUID, clock: Clock
) -> IssuedInvitation:
    """A fresh token; any earlier pending invitation of this user to this org is dropped, so
    only the newest link works."""
    await repository.delete_pending_invitations(caller.org_id, user_id)
    token = new_opaque_token()
    now = clock.now()
    invitation = Invitation(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        user_id=user_id,
        token_hash=hash_opaque_token(token),
        invited_by=caller.user_id,
        expires_at=now + INVITATION_TTL,
        created_at=now,
        updated_at=now,
    )
    repository.session.add(invitation)
    await repository.session.flush()
    return IssuedInvitation(token=token, expires_at=invitation.expires_at)
