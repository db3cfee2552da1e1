"""The background workers ``portico serve`` runs beside the HTTP servers: the outbox mailer
(``core.mailer``), the jobs worker (``core.job_worker``), the analytics retention sweep
(``management.analytics.retention``) and compaction (``management.analytics.compaction``),
as asyncio tasks of the same loop. Each replica runs its
own; row claims keep them from doing one thing twice (the sweep deletes what is past its
retention: two replicas doing it delete the same rows once).
``PORTICO_RUN_WORKERS=false`` makes a replica serve HTTP only."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.job_worker import JobWorker
from portico.core.mailer import Mailer
from portico.core.settings import Settings
from portico.management.analytics.compaction import AnalyticsCompaction
from portico.management.analytics.retention import AnalyticsRetention

# job kinds register when their modules load: loaded here so that the worker runs them
# whichever admin-API modules the app routes (the gateway imports' import-apis, governance's
# linting runs, the health checks, the subscriptions' provisioning: its schedule imports them)
from portico.marketplace.governance import jobs as _governance_jobs  # noqa: F401
from portico.marketplace.health import jobs as _health_jobs  # noqa: F401
from portico.marketplace.health.schedule import HealthSchedule
from portico.marketplace.imports import jobs as _import_jobs  # noqa: F401
from portico.marketplace.subscription.schedule import SubscriptionSchedule

logger = logging.getLogger("portico.worker")


@dataclass
class Workers:
    mailer: Mailer
    jobs: JobWorker
    analytics: AnalyticsRetention
    compaction: AnalyticsCompaction
    #: queues the scheduled health checks; None when PORTICO_MARKETPLACE_HEALTH_INTERVAL_SECONDS=0
    health: HealthSchedule | None = None
    #: queues the subscriptions' remote work again when its retry is due
    subscriptions: SubscriptionSchedule | None = None

    def start(self) -> None:
        self.mailer.start()
        self.jobs.start()
        self.analytics.start()
        self.compaction.start()
        if self.health is not None:
            self.health.start()
        if self.subscriptions is not None:
            self.subscriptions.start()
        mode = "SMTP" if self.mailer.smtp else "log only (no PORTICO_SMTP_URL)"
        logger.info("workers started: mailer (%s), jobs (%s)", mode, self.jobs.name)

    async def stop(self, grace: float = 5.0) -> None:
        """Let work in hand finish for up to ``grace`` seconds each; what remains is left
        for the next worker (queued jobs, leased emails)."""
        if self.subscriptions is not None:
            await self.subscriptions.stop(grace)
        if self.health is not None:
            await self.health.stop(grace)
        await self.compaction.stop(grace)
        await self.analytics.stop(grace)
        await self.jobs.stop(grace)
        await self.mailer.stop(grace)


def build_workers(settings: Settings, *, database: Database, clock: Clock) -> Workers | None:
    """The workers to start, or None when disabled. A malformed ``PORTICO_SMTP_URL`` is
    refused here, at start, rather than at the first email."""
    if not settings.run_workers:
        logger.info("workers disabled (PORTICO_RUN_WORKERS=false)")
        return None
    return Workers(
        mailer=Mailer(
            database,
            clock,
            smtp_url=settings.smtp_url,
            mail_from=settings.mail_from,
            poll_seconds=settings.worker_poll_seconds,
        ),
        # the job kinds of the parts register when their modules load; this worker runs
        # them with the process's settings (a gateway import reaches out through its guard)
        jobs=JobWorker(
            database, clock, poll_seconds=settings.worker_poll_seconds, settings=settings
        ),
        analytics=AnalyticsRetention(
            database,
            clock,
            minute_retention_days=settings.analytics_minute_retention_days,
            hour_retention_days=settings.analytics_hour_retention_days,
            interval=settings.analytics_retention_interval_seconds,
        ),
        compaction=AnalyticsCompaction(
            database,
            clock,
            interval=settings.analytics_compaction_interval_seconds,
            lookback_hours=settings.analytics_compaction_lookback_hours,
        ),
        health=HealthSchedule(
            database, clock, interval=settings.marketplace_health_interval_seconds
        )
        if settings.marketplace_health_interval_seconds > 0
        else None,
        subscriptions=SubscriptionSchedule(database, clock),
    )
