"""The scheduled health checks: every ``PORTICO_MARKETPLACE_HEALTH_INTERVAL_SECONDS`` a
``health-check-all`` job is queued (0 turns this off), and the jobs worker runs it like any
job (claimed once whatever the number of replicas, retried if its worker dies, cancellable
at ``DELETE /jobs/{id}``). A round is queued only when none is unfinished and none was
queued within the interval, so replicas that each run this loop queue one round between
them, and a round slower than the interval is not stacked up behind itself."""

from __future__ import annotations

import logging
from datetime import timedelta

from portico.core.background import BackgroundLoop
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.db.session import run_after_commit
from portico.core.job_worker import enqueue
from portico.marketplace.health.jobs import CHECK_ALL
from portico.marketplace.health.repository import HealthRepository

logger = logging.getLogger("portico.marketplace.health")


class HealthSchedule(BackgroundLoop):
    task_name = "portico-health-schedule"

    def __init__(self, database: Database, clock: Clock, *, interval: float) -> None:
        super().__init__()
        self.database = database
        self.clock = clock
        self.interval = interval

    async def run(self) -> None:
        while not self._stopping:
            try:
                await self.queue_if_due()
            except Exception:  # the schedule outlives a bad moment of the store
                logger.exception("could not queue the scheduled health checks; retrying")
            await self._sleep(self.interval)

    async def queue_if_due(self) -> bool:
        """Queue a round if one is due; whether it did."""
        now = self.clock.now()
        # a little under the interval: a round queued one interval ago is due again now
        since = now - timedelta(seconds=self.interval * 0.9)
        async with self.database.session() as session:
            async with session.begin():
                if not await HealthRepository(session).round_due(CHECK_ALL, since=since):
                    return False
                await enqueue(
                    session,
                    kind=CHECK_ALL,
                    params={"trigger": "scheduled"},
                    created_by=None,
                    now=now,
                )
            run_after_commit(session)
        return True
