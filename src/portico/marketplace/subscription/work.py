"""The remote work owed for subscriptions and apps, made durable.

Owing work is a change of the row in the transaction that decides it (an approval, a
revocation, a deletion, a rotation): the action, a due time, and a job queued in the same
transaction (so the work is never lost if that transaction commits, and never done if it
does not). While a job has the work in hand the due time is the end of its lease: if the
worker dies, the schedule (``schedule.py``) queues it again once the lease is over. A
failed attempt records its error and sets the due time after a backoff (doubling from
:data:`FIRST_RETRY_SECONDS` up to :data:`MAX_RETRY_SECONDS`); the schedule queues the
next attempt when it is due, until one succeeds. Nobody has to act.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.job_worker import enqueue
from portico.marketplace.developer_app.models import AppRemote, RemoteWork
from portico.marketplace.subscription.models import RemoteAction, Subscription

#: job kinds: one subscription's remote work; one remote app's (a key to set, a removal)
SYNC_SUBSCRIPTION = "subscription-sync"
SYNC_REMOTE_APP = "developer-app-remote-sync"
#: how long a job holds the work before the schedule takes it up again (a dead worker)
LEASE_SECONDS = 300.0
FIRST_RETRY_SECONDS = 1.0
MAX_RETRY_SECONDS = 300.0


def retry_delay(attempts: int) -> timedelta:
    """The wait before the next attempt, after ``attempts`` failed ones."""
    exponent = max(attempts - 1, 0)
    return timedelta(seconds=min(FIRST_RETRY_SECONDS * 2 ** min(exponent, 30), MAX_RETRY_SECONDS))


def lease_end(now: datetime) -> datetime:
    return now + timedelta(seconds=LEASE_SECONDS)


async def owe(
    session: AsyncSession, subscription: Subscription, action: RemoteAction, now: datetime
) -> None:
    """``subscription`` now owes ``action`` on its gateway connection (NONE: nothing any
    more); a job is queued for it in the caller's transaction."""
    subscription.remote_action = action
    subscription.remote_generation += 1
    subscription.attempts = 0
    subscription.last_error = None
    if action is RemoteAction.NONE:
        subscription.due_at = None
        await session.flush()
        return
    await take_up(session, subscription, now)


async def take_up(session: AsyncSession, subscription: Subscription, now: datetime) -> None:
    """Queue a job for the subscription's owed work, leasing it to that job."""
    subscription.due_at = lease_end(now)
    await session.flush()
    await enqueue(
        session,
        kind=SYNC_SUBSCRIPTION,
        params={"subscription_id": str(subscription.id)},
        created_by=None,
        now=now,
    )


async def owe_remote(
    session: AsyncSession, remote: AppRemote, work: RemoteWork, now: datetime
) -> None:
    """``remote`` now owes ``work`` (a removal is never downgraded to a key change)."""
    if remote.work is RemoteWork.REMOVE and work is RemoteWork.SET_KEY:
        return
    remote.work = work
    remote.attempts = 0
    remote.last_error = None
    await take_up_remote(session, remote, now)


async def take_up_remote(session: AsyncSession, remote: AppRemote, now: datetime) -> None:
    remote.due_at = lease_end(now)
    await session.flush()
    await enqueue(
        session,
        kind=SYNC_REMOTE_APP,
        params={"remote_id": str(remote.id)},
        created_by=None,
        now=now,
    )
