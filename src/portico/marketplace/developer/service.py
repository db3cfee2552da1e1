"""The developer's own account: its profile and organisations, its notifications, and the
acceptance of an organisation's invitation.

Accepting: the token (from the invitation email; stored as its SHA-256) names an invited
relationship, which becomes active. An account the invitation created (invited, no
password) chooses its password here and becomes active with it. An existing account proves
it is its owner, with its own password or by calling signed in as it, because the inviter
saw the token too (CONVENTIONS.md, Security). A token that names no open invitation (wrong,
used, withdrawn, or for an account that is blocked or rejected) is one answer, which says
nothing more. Audited in the request's transaction.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from anyio import to_thread
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import AccountStatus, User, find_by_id
from portico.core.audit import Actor
from portico.core.clock import Clock
from portico.core.errors import NotFound, Unauthorized, ValidationFailed
from portico.core.pagination import ListQuery, Page
from portico.core.passwords import hash_password, verify_password
from portico.core.tokens import hash_opaque_token
from portico.marketplace import SURFACE
from portico.marketplace.developer.repository import DeveloperRepository
from portico.marketplace.developer.schemas import (
    InvitationAccepted,
    Me,
    MyNotification,
    MyOrganisation,
)
from portico.marketplace.notification.repository import (
    NotificationFilters,
    NotificationRepository,
)
from portico.marketplace.organisation import roles as organisation_roles
from portico.marketplace.organisation import service as organisation_service
from portico.marketplace.organisation.models import MembershipStatus
from portico.marketplace.organisation.repository import MembershipRepository
from portico.marketplace.organisation.schemas import RoleRef, TeamRef

#: a password chosen here is held to the portal registration's rule
NEW_PASSWORD_MIN_LENGTH = 12
#: accounts an invitation cannot let in: an administrator decided against them
_REFUSED = frozenset({AccountStatus.BLOCKED, AccountStatus.REJECTED})


class InvitationInvalid(NotFound):
    default_detail = "no open invitation has this token (it may be used or withdrawn)"


class InvitationOwnerUnproven(Unauthorized):
    default_detail = (
        "the invited account already exists: sign in as it, or give its password, to accept"
    )


# -- profile ----------------------------------------------------------------------------------


async def profile(*, session: AsyncSession, user_id: uuid.UUID) -> Me:
    user = await find_by_id(session, user_id)
    if user is None:  # deleted since the token was checked, in another transaction
        raise Unauthorized("invalid token")
    related = await DeveloperRepository(session).relationships(user.id)
    members = await organisation_service.members_of(
        MembershipRepository(session), [membership for membership, _ in related]
    )
    organisations = []
    for (membership, organisation), member in zip(related, members, strict=True):
        roles: list[RoleRef] = []
        permissions: list[str] = []
        if membership.status is MembershipStatus.ACTIVE:
            held = await organisation_roles.member_roles(
                session=session, organisation_id=organisation.id, membership_id=membership.id
            )
            inherited = [role for team in held.inherited for role in team.roles]
            roles = list({role.id: role for role in [*held.direct, *inherited]}.values())
            permissions = held.permissions
        organisations.append(
            MyOrganisation(
                id=organisation.id,
                name=organisation.name,
                relationship=membership.id,
                status=membership.status,
                roles=roles,
                permissions=permissions,
                teams=[TeamRef(id=team.id, name=team.name) for team in member.teams],
            )
        )
    return Me(
        id=user.id,
        email=user.email,
        display_name=user.display_name,
        status=user.status,
        organisations=organisations,
    )


# -- notifications ----------------------------------------------------------------------------


async def notifications(
    *, session: AsyncSession, user_id: uuid.UUID, query: ListQuery
) -> Page[MyNotification]:
    """The account's own notifications (those addressed to it), in the query's order."""
    repository = NotificationRepository(session)
    type_ = query.filters.get("type")
    page = await repository.page(
        repository.matching(NotificationFilters(type=type_, recipient_user_id=user_id)), query
    )
    return Page(
        items=[MyNotification.model_validate(row) for row in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )


# -- invitations ------------------------------------------------------------------------------


async def accept_invitation(
    *,
    session: AsyncSession,
    token: str,
    password: str | None,
    display_name: str | None,
    signed_in: uuid.UUID | None,
    actor: Actor,
    clock: Clock,
) -> InvitationAccepted:
    """``actor``: the caller's coordinates (request id, address); ``signed_in``: the
    account the caller signed in as, if it did."""
    membership = await DeveloperRepository(session).invited(hash_opaque_token(token))
    if membership is None:
        raise InvitationInvalid()
    repository = MembershipRepository(session)
    user = await organisation_service.account_of(repository, membership)
    if user.status in _REFUSED:
        raise InvitationInvalid()
    organisation = await organisation_service.organisation_of(session, membership.organisation_id)
    before = await organisation_service.snapshot(repository, membership)
    account_before = _account(user)
    now = clock.now()
    if user.password_hash is None:
        # an account the invitation made: the invitee chooses its password here
        if password is None:
            raise ValidationFailed.at("/password", "password: required to set up the account")
        if len(password) < NEW_PASSWORD_MIN_LENGTH:
            raise ValidationFailed.at(
                "/password", f"password: must be at least {NEW_PASSWORD_MIN_LENGTH} characters"
            )
        user.password_hash = await to_thread.run_sync(hash_password, password)
        if user.status is AccountStatus.INVITED:
            user.status, user.status_reason, user.status_changed_at = (
                AccountStatus.ACTIVE,
                None,
                now,
            )
    elif signed_in != user.id:
        proven = password is not None and await to_thread.run_sync(
            verify_password, user.password_hash, password
        )
        if not proven:
            raise InvitationOwnerUnproven()
    if display_name is not None:
        user.display_name = display_name
    organisation_service.set_status(membership, MembershipStatus.ACTIVE, None, now)
    user.updated_at = now
    await session.flush()
    actor = replace(actor, id=user.id, email=user.email, kind="user")
    await audit.record(
        session,
        actor,
        action="membership.accept",
        entity_type=organisation_service.ENTITY,
        entity_id=membership.id,
        before=before,
        after=await organisation_service.snapshot(repository, membership),
        summary=f"{user.email} accepted the invitation to {organisation.name}",
        surface=SURFACE,
        module=organisation_service.MODULE,
    )
    if _account(user) != account_before:
        await audit.record(
            session,
            actor,
            action="user.accept_invitation",
            entity_type="user",
            entity_id=user.id,
            before=account_before,
            after=_account(user),
            summary=f"{user.email} set up the account with an invitation to {organisation.name}",
            surface=SURFACE,
            module="user",
        )
    return InvitationAccepted(
        organisation=organisation.id,
        organisation_name=organisation.name,
        relationship=membership.id,
        account_status=user.status,
    )


def _account(user: User) -> dict[str, Any]:
    """What the audit keeps of the account (never its password or hash)."""
    return {
        "id": str(user.id),
        "email": user.email,
        "display_name": user.display_name,
        "status": user.status.value,
        "has_password": user.password_hash is not None,
    }
