"""Self-registration on the developer portal: a new account waits, PENDING, for an
administrator's approval (``POST /api/admin/v1/users/{user}/approve``). A partner
registration names an organisation: the new account also waits, as a pending relationship,
in ``/organisations/{group}/approvals``, and approving it there activates both.

The answer never says whether the address already had an account (account enumeration):
the password is hashed either way, so that the two cases also take comparable time, and an
existing account is left untouched (and is not put in an organisation's queue: nobody may
enrol someone else's account). An organisation that does not exist is refused (400) before
anything else, whoever registers, so that this says nothing about accounts either.
Registrations are rate limited per client address by
the endpoint (``endpoints.py``).
"""

from __future__ import annotations

import asyncio
import uuid

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import AccountStatus, User, find_by_email
from portico.core.audit import Actor
from portico.core.clock import Clock
from portico.core.passwords import hash_password
from portico.marketplace.public import (
    SURFACE,
    USER_MODULE,
    check_organisation,
    request_membership,
)
from portico.portal.registration.schemas import RegistrationCreate

ACTION = "user.register"


async def register(
    *, session: AsyncSession, data: RegistrationCreate, clock: Clock, actor: Actor
) -> None:
    if data.organisation is not None:
        await check_organisation(session, data.organisation)
    # argon2 is slow on purpose: off the event loop, and paid whether the account is new or not
    password_hash = await asyncio.to_thread(hash_password, data.password)
    if await find_by_email(session, data.email) is not None:
        return
    now = clock.now()
    user = User(
        id=uuid.uuid4(),
        email=data.email,
        display_name=data.display_name,
        password_hash=password_hash,
        status=AccountStatus.PENDING,
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
        return  # a concurrent registration of the same address won: the same answer
    after: dict[str, str] = {
        "id": str(user.id),
        "email": user.email,
        "display_name": user.display_name,
        "status": user.status.value,
    }
    summary = f"{user.email} registered on the portal; awaiting approval"
    if data.organisation is not None:
        relationship = await request_membership(
            session, user=user, organisation_id=data.organisation, now=now
        )
        after |= {"organisation": str(data.organisation), "relationship": str(relationship)}
        summary += " by the organisation"
    await audit.record(
        session,
        actor,
        action=ACTION,
        entity_type="user",
        entity_id=user.id,
        after=after,
        summary=summary,
        surface=SURFACE,
        module=USER_MODULE,
    )
