"""Organisations as the marketplace administers them: reading organisations and teams, the
people in them (memberships, the seed's relationships), invitations and removal; the
helpers the partner approvals (``approvals.py``) and roles (``roles.py``) share. Every
change is audited in the request's transaction; nothing here commits.

Membership states: invited (an invitation was sent; grants nothing until accepted) or
pending (a partner registration names the organisation) → active (approved, or the
invitation accepted) or rejected (``approvals.py``). Removing a membership, in any state,
keeps the account. Who is a member is what ``member_organisations`` answers.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.account import AccountStatus, User, find_by_email
from portico.core.clock import Clock
from portico.core.errors import NotFound, ValidationFailed
from portico.core.filter_values import FilterValues
from portico.core.pagination import ListQuery, Page
from portico.core.tokens import hash_opaque_token, new_opaque_token
from portico.marketplace.access import SiteCaller
from portico.marketplace.notification import service as notification_service
from portico.marketplace.organisation import emails
from portico.marketplace.organisation.models import (
    MembershipStatus,
    Organisation,
    OrganisationMembership,
    Team,
    TeamMembership,
)
from portico.marketplace.organisation.repository import (
    MemberFilters,
    MembershipRepository,
    OrganisationRepository,
    TeamRepository,
)
from portico.marketplace.organisation.schemas import (
    MemberInvite,
    MemberRead,
    OrganisationRead,
    TeamRead,
)

MODULE = "organisation"
ENTITY = "membership"


class OrganisationNotFound(NotFound):
    default_detail = "organisation not found"


class TeamNotFound(NotFound):
    default_detail = "team not found"


class MembershipNotFound(NotFound):
    default_detail = "relationship not found"


@dataclass(frozen=True)
class Member:
    """What the member endpoints show of a membership (read by ``MemberRead``)."""

    id: uuid.UUID
    organisation_id: uuid.UUID
    user: User
    status: MembershipStatus
    status_reason: str | None
    status_changed_at: datetime
    teams: list[Team]
    invited_by: uuid.UUID | None
    created_at: datetime


@dataclass(frozen=True)
class InviteFailure:
    email: str
    status: int
    detail: str


# -- reading ----------------------------------------------------------------------------------


async def list_organisations(*, session: AsyncSession, query: ListQuery) -> Page[OrganisationRead]:
    """``filter[name]``: a case-insensitive substring of the name."""
    repository = OrganisationRepository(session)
    values = FilterValues(query.filters)
    name = _fragment(values, "name")
    values.check()
    page = await repository.page(repository.matching(name), query)
    counts = await repository.counts([o.id for o in page.items])
    items = [_organisation_read(o, counts[o.id]) for o in page.items]
    return Page(items=items, page=page.page, size=page.size, total=page.total)


async def get_organisation(
    *, session: AsyncSession, organisation_id: uuid.UUID
) -> OrganisationRead:
    repository = OrganisationRepository(session)
    organisation = await organisation_of(session, organisation_id)
    counts = await repository.counts([organisation.id])
    return _organisation_read(organisation, counts[organisation.id])


async def list_members(
    *,
    session: AsyncSession,
    organisation_id: uuid.UUID,
    query: ListQuery,
    status: MembershipStatus | None = None,
    team_id: uuid.UUID | None = None,
) -> Page[Member]:
    """The organisation's memberships. ``filter[status]``, ``filter[email]`` (substring,
    case-insensitive) and ``filter[team]``; ``status`` or ``team_id`` given here fix them
    (the approvals queue, a team's members)."""
    await organisation_of(session, organisation_id)
    values = FilterValues(query.filters)
    filters = MemberFilters(
        status=status or values.choice("status", MembershipStatus),
        email=_fragment(values, "email"),
        team_id=team_id or values.identifier("team", "a team id (GET .../teams)"),
    )
    values.check()
    repository = MembershipRepository(session)
    page = await repository.page(repository.of_organisation(organisation_id, filters), query)
    return Page(
        items=await members_of(repository, page.items),
        page=page.page,
        size=page.size,
        total=page.total,
    )


async def list_teams(
    *, session: AsyncSession, organisation_id: uuid.UUID, query: ListQuery
) -> Page[TeamRead]:
    """``filter[name]``: a case-insensitive substring of the name."""
    await organisation_of(session, organisation_id)
    values = FilterValues(query.filters)
    name = _fragment(values, "name")
    values.check()
    repository = TeamRepository(session)
    page = await repository.page(repository.of_organisation(organisation_id, name), query)
    counts = await repository.member_counts([t.id for t in page.items])
    items = [
        TeamRead(
            id=t.id,
            organisation_id=t.organisation_id,
            name=t.name,
            members=counts.get(t.id, 0),
            created_at=t.created_at,
            updated_at=t.updated_at,
        )
        for t in page.items
    ]
    return Page(items=items, page=page.page, size=page.size, total=page.total)


async def list_team_members(
    *, session: AsyncSession, organisation_id: uuid.UUID, team_id: uuid.UUID, query: ListQuery
) -> Page[Member]:
    await organisation_of(session, organisation_id)
    if await TeamRepository(session).in_organisation(organisation_id, team_id) is None:
        raise TeamNotFound()
    return await list_members(
        session=session, organisation_id=organisation_id, query=query, team_id=team_id
    )


async def member_organisations(
    session: AsyncSession, user_id: uuid.UUID
) -> dict[uuid.UUID, set[uuid.UUID]]:
    """The organisations the account is an active member of, each with the ids of the teams
    it is in there: ``{organisation_id: {team_id, ...}}`` (an empty set: no team). Invited,
    pending and rejected relationships count for nothing. This is what the developer
    portal's visibility filter asks: an organisation-visible node is shown to the members
    of its organisations, restricted to its teams when it names some."""
    return await MembershipRepository(session).active_teams_of_user(user_id)


async def membership_in(
    *, session: AsyncSession, organisation_id: uuid.UUID, membership_id: uuid.UUID
) -> OrganisationMembership:
    """The relationship, in this organisation only (404 for the organisation first)."""
    await organisation_of(session, organisation_id)
    return await membership_of(session, organisation_id, membership_id)


# -- changing ---------------------------------------------------------------------------------


async def invite(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    organisation_id: uuid.UUID,
    data: MemberInvite,
    clock: Clock,
    base_url: str,
) -> tuple[list[Member], list[InviteFailure]]:
    """Invite each address: an account is created (invited, no password) where there is
    none; a new relationship is invited, an invited or rejected one is invited again (a new
    token: the previous link stops working). An active member, a registration awaiting
    approval or a blocked account is reported as failed (409) and the others go on. The
    teams (all of the organisation's, or 400) are given to each invited relationship."""
    organisation = await organisation_of(session, organisation_id)
    teams = await TeamRepository(session).many_in_organisation(organisation_id, data.teams)
    found = {t.id for t in teams}
    missing = [i for i, team_id in enumerate(data.teams) if team_id not in found]
    if missing:
        raise ValidationFailed(
            [
                {
                    "pointer": f"/teams/{i}",
                    "detail": f"teams/{i}: no team {data.teams[i]} in this organisation",
                }
                for i in missing
            ]
        )
    repository = MembershipRepository(session)
    invited: list[OrganisationMembership] = []
    failures: list[InviteFailure] = []
    for address in data.emails:
        user = await _account_for(session, address, clock)
        membership = await repository.of_user(organisation_id, user.id)
        refusal = _refusal(user, membership)
        if refusal is not None:
            failures.append(InviteFailure(address, 409, refusal))
            continue
        before = None if membership is None else await snapshot(repository, membership)
        membership = await _invited(session, membership, organisation_id, user, caller, clock)
        token = new_opaque_token()
        membership.invitation_token_hash = hash_opaque_token(token)
        await _join_teams(session, repository, membership, teams)
        await session.flush()
        await notify(
            session,
            emails.invitation(organisation, user, token=token, base_url=base_url),
            user=user,
            membership=membership,
            clock=clock,
        )
        await audited(
            repository, caller, membership, "membership.invite", f"invited {user.email}", before
        )
        invited.append(membership)
    return await members_of(repository, invited), failures


async def remove_member(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    organisation_id: uuid.UUID,
    membership_id: uuid.UUID,
) -> None:
    """End the relationship, whatever its state, and with it its team memberships; the
    account stays as it is."""
    repository = MembershipRepository(session)
    membership = await membership_of(session, organisation_id, membership_id)
    before = await snapshot(repository, membership)
    await repository.delete(membership)
    await caller.audit(
        session,
        "membership.remove",
        entity_type=ENTITY,
        entity_id=membership_id,
        module=MODULE,
        summary=f"removed {before['user']['email']} from the organisation",
        before=before,
    )


# -- helpers ----------------------------------------------------------------------------------


def _fragment(values: FilterValues, name: str) -> str | None:
    """A containment filter's text: blank would match everything, so it is refused."""
    raw = values.text(name)
    if raw is not None and not raw.strip():
        values.refuse(name, "text that is not blank")
        return None
    return raw


async def organisation_of(session: AsyncSession, organisation_id: uuid.UUID) -> Organisation:
    organisation = await OrganisationRepository(session).get(organisation_id)
    if organisation is None:
        raise OrganisationNotFound()
    return organisation


async def membership_of(
    session: AsyncSession,
    organisation_id: uuid.UUID,
    membership_id: uuid.UUID,
    *,
    lock: bool = False,
) -> OrganisationMembership:
    """The relationship, in this organisation only: another organisation's is not found."""
    found = await MembershipRepository(session).in_organisation(
        organisation_id, membership_id, lock=lock
    )
    if found is None:
        raise MembershipNotFound()
    return found


async def account_of(repository: MembershipRepository, membership: OrganisationMembership) -> User:
    return (await repository.accounts([membership.user_id]))[membership.user_id]


async def _account_for(session: AsyncSession, address: str, clock: Clock) -> User:
    """The account of ``address``, created (invited, without a password) if it has none."""
    user = await find_by_email(session, address)
    if user is not None:
        return user
    now = clock.now()
    user = User(
        id=uuid.uuid4(),
        email=address,
        display_name="",
        password_hash=None,
        status=AccountStatus.INVITED,
        is_platform_admin=False,
        status_changed_at=now,
        created_at=now,
        updated_at=now,
    )
    try:
        async with session.begin_nested():
            session.add(user)
            await session.flush()
    except IntegrityError:
        # a registration of the same address committed in between: that account it is
        concurrent = await find_by_email(session, address)
        if concurrent is None:
            raise
        return concurrent
    return user


def _refusal(user: User, membership: OrganisationMembership | None) -> str | None:
    if user.status is AccountStatus.BLOCKED:
        return f"{user.email}: the account is blocked"
    if membership is None:
        return None
    if membership.status is MembershipStatus.ACTIVE:
        return f"{user.email}: already a member"
    if membership.status is MembershipStatus.PENDING:
        return f"{user.email}: a registration awaits approval; approve it instead"
    return None


async def _invited(
    session: AsyncSession,
    membership: OrganisationMembership | None,
    organisation_id: uuid.UUID,
    user: User,
    caller: SiteCaller,
    clock: Clock,
) -> OrganisationMembership:
    now = clock.now()
    if membership is None:
        membership = OrganisationMembership(
            id=uuid.uuid4(),
            organisation_id=organisation_id,
            user_id=user.id,
            created_at=now,
        )
        session.add(membership)
    set_status(membership, MembershipStatus.INVITED, None, now)
    membership.invited_by = caller.user.id
    return membership


async def _join_teams(
    session: AsyncSession,
    repository: MembershipRepository,
    membership: OrganisationMembership,
    teams: Sequence[Team],
) -> None:
    await session.flush()
    already = await repository.team_ids_in(membership.id)
    for team in teams:
        if team.id not in already:
            session.add(TeamMembership(team_id=team.id, membership_id=membership.id))


def set_status(
    membership: OrganisationMembership, status: MembershipStatus, reason: str | None, now: datetime
) -> None:
    membership.status = status
    membership.status_reason = reason
    membership.status_changed_at = now
    membership.updated_at = now
    if status is not MembershipStatus.INVITED:
        membership.invitation_token_hash = None  # a decided relationship accepts no link


async def notify(
    session: AsyncSession,
    message: emails.Message,
    *,
    user: User | None,
    membership: OrganisationMembership,
    clock: Clock,
    to: str | None = None,
    data: dict[str, Any] | None = None,
) -> None:
    await notification_service.notify(
        session,
        type=message.type,
        audience="user",
        subject=message.subject,
        body=message.body,
        email_body=message.email_body,
        recipient=user,
        to=to,
        email_kind=message.kind,
        now=clock.now(),
        entity_type=ENTITY,
        entity_id=membership.id,
        data={"organisation_id": str(membership.organisation_id), **(data or {})},
    )


async def members_of(
    repository: MembershipRepository, memberships: Sequence[OrganisationMembership]
) -> list[Member]:
    """Views of ``memberships`` with their accounts and teams: two queries for a page."""
    ids = [m.id for m in memberships]
    users = await repository.accounts({m.user_id for m in memberships})
    teams = await repository.teams_of(ids)
    return [
        Member(
            id=m.id,
            organisation_id=m.organisation_id,
            user=users[m.user_id],
            status=m.status,
            status_reason=m.status_reason,
            status_changed_at=m.status_changed_at,
            teams=teams.get(m.id, []),
            invited_by=m.invited_by,
            created_at=m.created_at,
        )
        for m in memberships
    ]


async def snapshot(
    repository: MembershipRepository, membership: OrganisationMembership
) -> dict[str, Any]:
    [member] = await members_of(repository, [membership])
    return MemberRead.model_validate(member).model_dump(mode="json")


async def audited(
    repository: MembershipRepository,
    caller: SiteCaller,
    membership: OrganisationMembership,
    operation: str,
    summary: str,
    before: dict[str, Any] | None,
) -> Member:
    await repository.session.flush()
    [member] = await members_of(repository, [membership])
    await caller.audit(
        repository.session,
        operation,
        entity_type=ENTITY,
        entity_id=membership.id,
        module=MODULE,
        summary=summary,
        before=before,
        after=MemberRead.model_validate(member).model_dump(mode="json"),
    )
    return member


def _organisation_read(organisation: Organisation, counts: dict[str, int]) -> OrganisationRead:
    return OrganisationRead(
        id=organisation.id,
        name=organisation.name,
        domains=[str(d) for d in organisation.domains],
        members=counts["members"],
        pending_approvals=counts["pending_approvals"],
        teams=counts["teams"],
        created_at=organisation.created_at,
        updated_at=organisation.updated_at,
    )
