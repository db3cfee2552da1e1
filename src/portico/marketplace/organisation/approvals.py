"""Partner approvals: a registration on the portal that names an organisation waits,
pending, until someone who may ``manage org members`` decides it (the seed's state table):

- approve: pending → active, and the approval email (a partner account still awaiting
  approval on the portal is activated with it);
- reject: pending → rejected, the reason required, kept and emailed; the account is deleted
  too only when the caller opts in, and only an account that was never let in and has no
  other relationship (409 otherwise, and nothing changes).

Audited in the request's transaction; nothing here commits.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.account import AccountStatus, User
from portico.core.clock import Clock
from portico.core.errors import Conflict
from portico.marketplace.access import SiteCaller
from portico.marketplace.organisation import emails
from portico.marketplace.organisation import service as organisation_service
from portico.marketplace.organisation.models import MembershipStatus, OrganisationMembership
from portico.marketplace.organisation.repository import MembershipRepository
from portico.marketplace.organisation.schemas import MemberRead, RejectedMember
from portico.marketplace.organisation.service import MODULE, Member

#: accounts that were never let in: the only ones a rejection may delete
_DELETABLE = frozenset({AccountStatus.PENDING, AccountStatus.INVITED, AccountStatus.REJECTED})


class NotAwaitingApproval(Conflict):
    def __init__(self, action: str, actual: MembershipStatus) -> None:
        super().__init__(
            f"cannot {action} this relationship: it is {actual.value}, and only pending "
            "registrations are decided"
        )


class AccountKept(Conflict):
    """The caller asked for the account's deletion and it may not be deleted here."""


async def request_membership(
    session: AsyncSession, *, user: User, organisation_id: uuid.UUID, now: datetime
) -> OrganisationMembership:
    """A partner registration on the portal that names the organisation: the relationship
    waits, pending, in ``/organisations/{group}/approvals``. For the portal's registration
    (through ``marketplace.public`` when it comes); an existing relationship is returned as
    it is, so that registering twice changes nothing."""
    await organisation_service.organisation_of(session, organisation_id)
    repository = MembershipRepository(session)
    existing = await repository.of_user(organisation_id, user.id)
    if existing is not None:
        return existing
    return await repository.add(
        OrganisationMembership(
            id=uuid.uuid4(),
            organisation_id=organisation_id,
            user_id=user.id,
            status=MembershipStatus.PENDING,
            status_changed_at=now,
            created_at=now,
            updated_at=now,
        )
    )


async def approve(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    organisation_id: uuid.UUID,
    membership_id: uuid.UUID,
    clock: Clock,
    base_url: str,
) -> Member:
    """pending → active, with the approval email queued in the same transaction. A
    partner's account that still awaits approval on the portal is activated with it: the
    registration was for this organisation, and it is decided."""
    organisation = await organisation_service.organisation_of(session, organisation_id)
    repository = MembershipRepository(session)
    membership = await organisation_service.membership_of(
        session, organisation_id, membership_id, lock=True
    )
    if membership.status is not MembershipStatus.PENDING:
        raise NotAwaitingApproval("approve", membership.status)
    before = await organisation_service.snapshot(repository, membership)
    now = clock.now()
    organisation_service.set_status(membership, MembershipStatus.ACTIVE, None, now)
    user = await organisation_service.account_of(repository, membership)
    if user.status is AccountStatus.PENDING:
        user.status, user.status_reason, user.status_changed_at = AccountStatus.ACTIVE, None, now
    await session.flush()
    message = emails.approval(organisation, user, base_url=base_url)
    await organisation_service.notify(
        session, message, user=user, membership=membership, clock=clock
    )
    member = await organisation_service.audited(
        repository, caller, membership, "membership.approve", f"approved {user.email}", before
    )
    return member


async def reject(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    organisation_id: uuid.UUID,
    membership_id: uuid.UUID,
    reason: str,
    delete_account: bool,
    clock: Clock,
) -> RejectedMember:
    """pending → rejected with the reason, emailed to the applicant. With
    ``delete_account``, the account goes too (and the relationship with it), but only an
    account that was never let in and has no other relationship: otherwise 409, and
    nothing changes."""
    organisation = await organisation_service.organisation_of(session, organisation_id)
    repository = MembershipRepository(session)
    membership = await organisation_service.membership_of(
        session, organisation_id, membership_id, lock=True
    )
    if membership.status is not MembershipStatus.PENDING:
        raise NotAwaitingApproval("reject", membership.status)
    user = await organisation_service.account_of(repository, membership)
    if delete_account:
        await _check_deletable(repository, caller, user, membership)
    before = await organisation_service.snapshot(repository, membership)
    organisation_service.set_status(membership, MembershipStatus.REJECTED, reason, clock.now())
    await session.flush()
    message = emails.rejection(organisation, user, reason=reason, account_deleted=delete_account)
    # a deleted account cannot be the notification's recipient: its address is
    await organisation_service.notify(
        session,
        message,
        user=None if delete_account else user,
        to=user.email,
        membership=membership,
        clock=clock,
        data={"reason": reason, "account_deleted": delete_account},
    )
    member = await organisation_service.audited(
        repository, caller, membership, "membership.reject", f"rejected {user.email}", before
    )
    read = RejectedMember(
        **MemberRead.model_validate(member).model_dump(), account_deleted=delete_account
    )
    if delete_account:
        await caller.audit(
            session,
            "user.delete",
            entity_type="user",
            entity_id=user.id,
            module=MODULE,
            summary=f"deleted {user.email} with its rejected registration",
            before=_account_snapshot(user),
        )
        # the relationship and the account's other rows go with it (ON DELETE CASCADE)
        await session.delete(user)
        await session.flush()
    return read


async def _check_deletable(
    repository: MembershipRepository,
    caller: SiteCaller,
    user: User,
    membership: OrganisationMembership,
) -> None:
    if user.is_platform_admin or user.id == caller.user.id:
        raise AccountKept("this account cannot be deleted; reject without delete_account")
    if user.status not in _DELETABLE:
        raise AccountKept(
            f"the account is {user.status.value} on the portal: only an account that was "
            "never let in is deleted with a rejection; reject without delete_account"
        )
    others = [
        m
        for m in await repository.others_of_user(user.id, membership.id)
        if m.status is not MembershipStatus.REJECTED
    ]
    if others:
        raise AccountKept(
            "the account has a relationship with another organisation; reject without "
            "delete_account"
        )


def _account_snapshot(user: User) -> dict[str, Any]:
    return {
        "id": str(user.id),
        "email": user.email,
        "display_name": user.display_name,
        "status": user.status.value,
    }
