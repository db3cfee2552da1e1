"""The retries of the remote work: every ``interval`` seconds (one by default) the due
subscriptions and remote apps (``due_at`` passed: a failed attempt's backoff is over, or a
job's lease ended with its worker) get a job each, and a new lease. Rows are claimed with
``FOR UPDATE SKIP LOCKED`` on PostgreSQL (SQLite serialises writers), so replicas that each
run this loop never queue one row twice. Cheap when nothing is due: two indexed reads."""

from __future__ import annotations

import logging

from portico.core.background import BackgroundLoop
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.db.session import run_after_commit
from portico.marketplace.developer_app.repository import AppRemoteRepository
from portico.marketplace.subscription import jobs as _jobs  # noqa: F401  (registers the kinds)
from portico.marketplace.subscription.repository import SubscriptionRepository
from portico.marketplace.subscription.work import take_up, take_up_remote

logger = logging.getLogger("portico.marketplace.subscriptions")

DEFAULT_INTERVAL = 1.0
#: rows queued per sweep at most (the rest at the next one)
BATCH = 100


class SubscriptionSchedule(BackgroundLoop):
    task_name = "portico-subscription-retries"

    def __init__(self, database: Database, clock: Clock, *, interval: float = DEFAULT_INTERVAL):
        super().__init__()
        self.database = database
        self.clock = clock
        self.interval = interval

    async def run(self) -> None:
        while not self._stopping:
            try:
                await self.sweep()
            except Exception:  # the schedule outlives a bad moment of the store
                logger.exception("could not queue the due subscription work; retrying")
            await self._sleep(self.interval)

    async def sweep(self) -> int:
        """Queue a job for each due row; how many were queued."""
        now = self.clock.now()
        async with self.database.session() as session:
            async with session.begin():
                subscriptions = await SubscriptionRepository(session).due(now, limit=BATCH)
                for subscription in subscriptions:
                    await take_up(session, subscription, now)
                remotes = await AppRemoteRepository(session).due(now, limit=BATCH)
                for remote in remotes:
                    await take_up_remote(session, remote, now)
            run_after_commit(session)
        return len(subscriptions) + len(remotes)
