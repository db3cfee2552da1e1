"""Portal accounts as the marketplace administers them: listing, approval of pending
registrations (activation email), rejection (reason required), blocking and unblocking
(silently), severing the identity-provider link. Every change is audited in the request's
transaction; nothing here commits.

States (seed, "States and transitions"): pending → active (approve) or rejected (reject);
active ⇄ blocked. Any other starting state is a 409 naming the account's actual status.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.account import AccountStatus, User, normalise_email
from portico.core.clock import Clock
from portico.core.errors import Conflict, NotFound
from portico.core.filter_values import FilterValues
from portico.core.pagination import ListQuery, Page
from portico.core.refresh import RefreshTokenStore
from portico.marketplace.access import SiteCaller
from portico.marketplace.notification import service as notification_service
from portico.marketplace.permissions import ROLES_BY_ID, Permission, permission_union
from portico.marketplace.role.schemas import RoleRef
from portico.marketplace.user import activation
from portico.marketplace.user.models import ExternalIdentity
from portico.marketplace.user.repository import Account, UserRepository
from portico.marketplace.user.schemas import UserRead, UserRoles

MODULE = "user"
ENTITY = "user"
BLOCK_SELF = "you cannot block your own account"
BLOCK_BOOTSTRAP = "the bootstrap administrator cannot be blocked"


class UserNotFound(NotFound):
    default_detail = "user not found"


class IdentityLinkNotFound(NotFound):
    default_detail = "the account has no identity-provider link"


class WrongStatus(Conflict):
    def __init__(self, action: str, expected: AccountStatus, actual: AccountStatus) -> None:
        super().__init__(
            f"cannot {action} this account: it is {actual.value}, and only {expected.value} "
            f"accounts can be {_PAST[action]}"
        )


_PAST = {"approve": "approved", "reject": "rejected", "block": "blocked", "unblock": "unblocked"}


def snapshot(account: Account) -> dict[str, Any]:
    return UserRead.model_validate(account).model_dump(mode="json")


async def list_(
    *, session: AsyncSession, query: ListQuery, status: AccountStatus | None = None
) -> Page[Account]:
    """Accounts matching ``query``'s filters: ``status`` (exact), ``email`` (case-insensitive
    substring), ``role`` (effective site role id). ``status`` given here fixes it."""
    repository = UserRepository(session)
    statement = repository.accounts()
    values = FilterValues(query.filters)
    if status is None:
        status = values.choice("status", AccountStatus)
    email = values.text("email")
    fragment = normalise_email(email) if email is not None else None
    if email is not None and not fragment:
        values.invalid("email", "must not be empty")
    role = values.one_of("role", tuple(ROLES_BY_ID))
    values.check()
    if status is not None:
        statement = repository.with_status(statement, status)
    if fragment:
        statement = repository.email_contains(statement, fragment)
    if role is not None:
        statement = repository.with_role(statement, ROLES_BY_ID[role].id)
    page = await repository.page(statement, query)
    views = await repository.views(page.items)
    return Page(items=views, page=page.page, size=page.size, total=page.total)


async def get(*, session: AsyncSession, user_id: uuid.UUID) -> Account:
    repository = UserRepository(session)
    return await _view(repository, await _user(repository, user_id))


async def roles(
    *, session: AsyncSession, user_id: uuid.UUID, available: Mapping[str, Permission]
) -> UserRoles:
    account = await get(session=session, user_id=user_id)
    held = permission_union(account.roles, available)
    return UserRoles(
        roles=[RoleRef(id=r.id, label=r.label) for r in account.roles],
        permissions=[key for key in available if key in held],
    )


async def approve(
    *, session: AsyncSession, caller: SiteCaller, user_id: uuid.UUID, clock: Clock, base_url: str
) -> Account:
    """pending → active, with the activation email queued and a notification recorded in
    the same transaction: either all of it is stored or none."""
    repository = UserRepository(session)
    user = await _user(repository, user_id, lock=True)
    before = snapshot(await _view(repository, user))
    _expect(user, "approve", AccountStatus.PENDING)
    _set_status(user, AccountStatus.ACTIVE, None, clock)
    await session.flush()
    now = clock.now()
    message = activation.email(user, base_url=base_url)
    await notification_service.notify(
        session,
        type=activation.NOTIFICATION_TYPE,
        audience="user",
        subject=message["subject"],
        body=message["body"],
        recipient=user,
        email_kind=activation.KIND,
        now=now,
        entity_type="user",
        entity_id=user.id,
    )
    return await _audited(
        repository, caller, user, "user.approve", f"approved {user.email}", before=before
    )


async def reject(
    *, session: AsyncSession, caller: SiteCaller, user_id: uuid.UUID, reason: str, clock: Clock
) -> Account:
    repository = UserRepository(session)
    user = await _user(repository, user_id, lock=True)
    before = snapshot(await _view(repository, user))
    _expect(user, "reject", AccountStatus.PENDING)
    _set_status(user, AccountStatus.REJECTED, reason, clock)
    return await _audited(
        repository, caller, user, "user.reject", f"rejected {user.email}", before=before
    )


async def block(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    user_id: uuid.UUID,
    reason: str | None,
    clock: Clock,
    refresh_tokens: RefreshTokenStore,
) -> Account:
    """active → blocked. ``can_sign_in`` already refuses a blocked account (its ID tokens
    stop working at once); its refresh tokens are revoked too, so unblocking later does not
    revive sessions that were open when it was blocked."""
    repository = UserRepository(session)
    user = await _user(repository, user_id, lock=True)
    before = snapshot(await _view(repository, user))
    if user.id == caller.user.id:
        raise Conflict(BLOCK_SELF)
    if user.is_platform_admin:
        # the one account both surfaces trust to repair everything else
        raise Conflict(BLOCK_BOOTSTRAP)
    _expect(user, "block", AccountStatus.ACTIVE)
    _set_status(user, AccountStatus.BLOCKED, reason, clock)
    await refresh_tokens.revoke_subject(session, user.id)
    return await _audited(
        repository, caller, user, "user.block", f"blocked {user.email}", before=before
    )


async def unblock(
    *, session: AsyncSession, caller: SiteCaller, user_id: uuid.UUID, clock: Clock
) -> Account:
    """blocked → active, silently: no notification, no email (the seed's rule)."""
    repository = UserRepository(session)
    user = await _user(repository, user_id, lock=True)
    before = snapshot(await _view(repository, user))
    _expect(user, "unblock", AccountStatus.BLOCKED)
    _set_status(user, AccountStatus.ACTIVE, None, clock)
    return await _audited(
        repository, caller, user, "user.unblock", f"unblocked {user.email}", before=before
    )


async def unlink_identity(*, session: AsyncSession, caller: SiteCaller, user_id: uuid.UUID) -> None:
    """Sever the account's link to its external identity; the account itself stays (it can
    still sign in with a password, or be linked again at its next provider sign-in)."""
    repository = UserRepository(session)
    user = await _user(repository, user_id)
    identity = await repository.identity_of(user.id)
    if identity is None:
        raise IdentityLinkNotFound()
    before = _identity_snapshot(identity)
    await session.delete(identity)
    await session.flush()
    await caller.audit(
        session,
        "user.identity_unlink",
        entity_type=ENTITY,
        entity_id=user.id,
        module=MODULE,
        summary=f"severed the {identity.provider} identity link of {user.email}",
        before=before,
    )


def _identity_snapshot(identity: ExternalIdentity) -> dict[str, Any]:
    return {
        "provider": identity.provider,
        "subject": identity.subject,
        "linked_at": identity.linked_at.isoformat(),
    }


async def _user(repository: UserRepository, user_id: uuid.UUID, *, lock: bool = False) -> User:
    user = await (repository.get_for_update(user_id) if lock else repository.get(user_id))
    if user is None:
        raise UserNotFound()
    return user


async def _view(repository: UserRepository, user: User) -> Account:
    return (await repository.views([user]))[0]


def _expect(user: User, action: str, expected: AccountStatus) -> None:
    if user.status is not expected:
        raise WrongStatus(action, expected, user.status)


def _set_status(user: User, status: AccountStatus, reason: str | None, clock: Clock) -> None:
    user.status = status
    user.status_reason = reason
    user.status_changed_at = clock.now()


async def _audited(
    repository: UserRepository,
    caller: SiteCaller,
    user: User,
    operation: str,
    summary: str,
    *,
    before: dict[str, Any],
) -> Account:
    await repository.session.flush()
    account = await _view(repository, user)
    await caller.audit(
        repository.session,
        operation,
        entity_type=ENTITY,
        entity_id=user.id,
        module=MODULE,
        summary=summary,
        before=before,
        after=snapshot(account),
    )
    return account
