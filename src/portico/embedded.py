"""``portico serve``: the control plane and an embedded gateway in one process.

The embedded gateway serves every environment on ``PORTICO_GATEWAY_LISTEN``, picking the
environment by Host. It gets its snapshots straight from the store (this process has it)
instead of over HTTP: a feeder wakes on every local publish and polls every second for
changes made by other control-plane replicas. The gateway runtime itself still imports no
database code; only this glue does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.gateway.discovery.watch import signature as discovery_signature
from portico.gateway.environment_runtime import SnapshotRefused
from portico.gateway.gateway import Gateway
from portico.gateway.telemetry.rollups import Batch, Sink
from portico.gateway.upstream_health import checkers_of
from portico.gateway.upstream_health import report as health_report
from portico.gateway.upstream_health import signature as health_signature
from portico.management.dataplane import service as dataplane_service
from portico.management.dataplane.notifier import NOTIFIER
from portico.management.dataplane.schemas import HeartbeatRequest
from portico.management.environment.repository import EnvironmentRepository
from portico.management.telemetry import service as telemetry_service
from portico.management.telemetry.schemas import TelemetryBatch

logger = logging.getLogger("portico.embedded")

POLL_SECONDS = 1.0
#: how often the embedded gateway reports itself as a data-plane node (a standalone node's
#: interval, gateway/sync.py), besides right after it applies a new config version
HEARTBEAT_SECONDS = 10.0


class SnapshotFeeder:
    """Feeds the embedded gateway its environments' snapshots, and reports it in each
    environment's data-plane nodes (its node id, the version it runs, its address, its
    upstreams' health) as a standalone node's heartbeat does, so that the console and
    ``GET .../nodes`` show what ``portico serve`` itself serves."""

    def __init__(
        self,
        gateway: Gateway,
        database: Database,
        *,
        clock: Clock | None = None,
        address: str | None = None,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
    ) -> None:
        self.gateway = gateway
        self.database = database
        self.clock = clock or Clock()
        self.address = address
        self.heartbeat_seconds = heartbeat_seconds
        self.wake = asyncio.Event()
        self._refused: dict[str, int] = {}
        self._reported: dict[str, tuple[object, ...]] = {}
        self._last_report = float("-inf")

    def _state(self) -> dict[str, tuple[object, ...]]:
        """What a heartbeat says of each environment, as far as a change of it matters:
        the version run, the health checkers' states, what discovery found or failed at."""
        return {
            env_id: (
                runtime.version,
                health_signature(checkers_of(runtime)),
                discovery_signature(runtime.discovered),
            )
            for env_id, runtime in self.gateway.environments.items()
        }

    async def report(self) -> None:
        """A heartbeat for every environment the gateway runs: at once for a version, a
        change of an upstream's health or of its discovery (nodes, failing) not reported yet,
        else every ``heartbeat_seconds``; with its upstreams' health and what its discovery
        found for each discovered upstream, checked as a standalone node's heartbeat is."""
        running = self._state()
        now = time.monotonic()
        due = now - self._last_report >= self.heartbeat_seconds
        if not due and all(self._reported.get(e) == v for e, v in running.items()):
            return
        async with self.database.session() as session, session.begin():
            environments = EnvironmentRepository(session)
            for env_id in running:
                env = await environments.get(uuid.UUID(env_id))
                runtime = self.gateway.environments.get(env_id)
                if env is None or runtime is None:  # deleted since: its nodes went with it
                    continue
                heard = HeartbeatRequest.model_validate(
                    {
                        "nodeId": self.gateway.options.node_id,
                        "environmentId": env_id,
                        "configVersion": runtime.version,
                        "upstreamHealth": health_report(checkers_of(runtime)),
                        "discovery": self.gateway.discovered(env_id),
                    }
                )
                await dataplane_service.heartbeat(
                    session=session,
                    env=env,
                    node_id=self.gateway.options.node_id,
                    config_version=runtime.version,
                    address=self.address,
                    clock=self.clock,
                    upstream_health=heard.upstream_health,
                    discovery=heard.discovery,
                )
        self._reported = running
        self._last_report = now

    async def sync_once(self) -> None:
        async with self.database.session() as session:
            environments = EnvironmentRepository(session)
            versions = {str(env): v for env, v in (await environments.latest_versions()).items()}
            running = self.gateway.versions()
            for env_id, version in versions.items():
                if running.get(env_id) == version or self._refused.get(env_id) == version:
                    continue
                document = await environments.config_document(uuid.UUID(env_id), version)
                if document is None:  # pruned between the two queries; next round
                    continue
                try:
                    await self.gateway.apply(document)
                except SnapshotRefused as error:
                    self._refused[env_id] = version
                    logger.error("config version %s of %s refused: %s", version, env_id, error)
        for env_id in set(running) - set(versions):  # environment deleted
            await self.gateway.remove(env_id)

    async def run(self) -> None:
        NOTIFIER.subscribe(self.wake.set)
        try:
            while True:
                try:
                    await self.sync_once()
                    await self.report()
                except Exception:  # the feeder must outlive a bad moment of the store
                    logger.exception("embedded gateway sync failed; retrying")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), POLL_SECONDS)
                self.wake.clear()
        finally:
            NOTIFIER.unsubscribe(self.wake.set)


def database_sink(database: Database, clock: Clock, node_id: str) -> Sink:
    """The embedded gateway's telemetry goes straight into the store, through the same
    validation and service as a node's ``POST /api/dataplane/v1/telemetry``."""

    async def sink(batch: Batch) -> None:
        async with database.session() as session, session.begin():
            for env_id in sorted(batch.environments()):
                env = await EnvironmentRepository(session).get(uuid.UUID(env_id))
                if env is None:  # deleted since: its telemetry went with it
                    continue
                document = {
                    "nodeId": node_id,
                    "environmentId": env_id,
                    "rollups": batch.documents(env_id),
                    "dropped": batch.dropped.get(env_id, 0),
                }
                await telemetry_service.ingest(
                    session=session,
                    env=env,
                    batch=TelemetryBatch.model_validate(document),
                    clock=clock,
                )

    return sink
