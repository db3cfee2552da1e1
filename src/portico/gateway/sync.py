"""Keeping a standalone gateway node's config current: long-poll the control plane, keep the
last good snapshot on disk, start from it when the control plane is down.

The loop never lets a failure stop serving: an unreachable control plane, a 5xx, or a
snapshot that fails to load are logged and retried with backoff while the previous
configuration keeps serving. Heartbeats report the node id, the version it runs and its
upstreams' health: every ``interval`` seconds, and within a second of a change of either.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import uuid
from pathlib import Path
from typing import Any

import httpx

from portico.gateway.discovery.watch import signature as discovery_signature
from portico.gateway.environment_runtime import SnapshotRefused
from portico.gateway.gateway import Gateway
from portico.gateway.telemetry.rollups import Batch
from portico.gateway.upstream_health import checkers_of
from portico.gateway.upstream_health import report as health_report
from portico.gateway.upstream_health import signature as health_signature

logger = logging.getLogger("portico.gateway.sync")

WAIT_SECONDS = 30
MAX_BACKOFF = 30.0
#: the control plane's bound on one telemetry post
MAX_ROLLUPS_PER_POST = 5_000


class SnapshotStore:
    """The last snapshot that loaded, on disk (written atomically)."""

    def __init__(self, directory: Path, env_id: str) -> None:
        self.path = directory / f"config-{env_id}.json"

    def load(self) -> dict[str, Any] | None:
        try:
            document: dict[str, Any] = json.loads(self.path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            logger.warning("ignoring unreadable disk snapshot %s: %s", self.path, error)
            return None
        return document

    def save(self, body: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(body)
        os.replace(temporary, self.path)  # readers see the old file or the new, never half


class ControlPlaneSync:
    def __init__(
        self,
        gateway: Gateway,
        *,
        control_plane: str,
        env_id: str,
        token: str,
        store: SnapshotStore,
        node_id: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """``transport``: how the control plane is reached (default: the network)."""
        self.gateway = gateway
        self.base = control_plane.rstrip("/")
        self.env_id = env_id
        self.store = store
        self.node_id = node_id or f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
        self.version = 0
        self.client = httpx.AsyncClient(
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(10.0, read=WAIT_SECONDS + 15),
            transport=transport,
        )

    async def start_from_disk(self) -> bool:
        document = self.store.load()
        if document is None:
            return False
        try:
            runtime = await self.gateway.apply(document)
        except SnapshotRefused as error:
            logger.warning("disk snapshot refused: %s", error)
            return False
        self.version = runtime.version
        logger.info("serving the disk snapshot, config version %s", self.version)
        return True

    async def run(self) -> None:
        backoff = 1.0
        while True:
            try:
                await self.poll_once()
                backoff = 1.0
            except asyncio.CancelledError:
                raise
            except (httpx.HTTPError, SnapshotRefused, ValueError) as error:
                logger.warning(
                    "config sync failed (%s); still serving version %s", error, self.version
                )
                await asyncio.sleep(backoff)
                backoff = min(MAX_BACKOFF, backoff * 2)

    async def poll_once(self) -> None:
        url = f"{self.base}/api/dataplane/v1/envs/{self.env_id}/config"
        params = {"since": self.version, "wait": WAIT_SECONDS} if self.version else {}
        response = await self.client.get(url, params=params)
        if response.status_code == 304:
            return
        response.raise_for_status()
        document = response.json()
        await self.gateway.apply(document)  # SnapshotRefused: the previous one keeps serving
        self.version = int(document["version"])
        self.store.save(response.content)

    def heartbeat_state(self) -> tuple[object, ...]:
        """What a change of calls for a heartbeat before the next periodic one."""
        runtime = self.gateway.environments.get(self.env_id)
        discovered = runtime.discovered if runtime is not None else {}
        return (
            self.version,
            health_signature(checkers_of(runtime)),
            discovery_signature(discovered),
        )

    async def heartbeat(self) -> None:
        """Tell the control plane which version this node runs, its upstreams' health as its
        checkers see it, and what its discovery found for each discovered upstream (the
        management API shows both per node: ``.../upstreams/{upstreamId}/health`` and
        ``.../discovered-nodes``)."""
        runtime = self.gateway.environments.get(self.env_id)
        response = await self.client.post(
            f"{self.base}/api/dataplane/v1/heartbeat",
            json={
                "nodeId": self.node_id,
                "environmentId": self.env_id,
                "configVersion": self.version,
                "upstreamHealth": health_report(checkers_of(runtime)),
                "discovery": self.gateway.discovered(self.env_id),
            },
        )
        response.raise_for_status()

    async def heartbeat_forever(self, interval: float = 10.0, check: float = 1.0) -> None:
        """A heartbeat every ``interval`` seconds, and as soon as a look every ``check``
        seconds finds a new version, a target whose health changed, or a discovered upstream
        whose failing started, ended or changed."""
        loop = asyncio.get_running_loop()
        sent: tuple[object, ...] | None = None
        last = float("-inf")
        while True:
            state = self.heartbeat_state()
            if state != sent or loop.time() - last >= interval:
                last, sent = loop.time(), state  # a failure is retried at the next interval
                try:
                    await self.heartbeat()
                except httpx.HTTPStatusError as refused:  # a defect, not an outage: say so
                    logger.warning("heartbeat refused: %s", refused.response.text[:500])
                except httpx.HTTPError as error:
                    logger.warning("heartbeat failed (%s); retrying", type(error).__name__)
            await asyncio.sleep(check)

    async def send_telemetry(self, batch: Batch) -> None:
        """A telemetry sink: the node's rollups of its environment, in posts of at most
        ``MAX_ROLLUPS_PER_POST``. What was delivered leaves ``batch`` before a failure is
        raised, so the recorder keeps only the rest."""
        while True:
            keys = list(batch.rollups)[:MAX_ROLLUPS_PER_POST]
            part = Batch({key: batch.rollups[key] for key in keys}, batch.dropped)
            dropped = batch.dropped.get(self.env_id, 0)
            response = await self.client.post(
                f"{self.base}/api/dataplane/v1/telemetry",
                json={
                    "nodeId": self.node_id,
                    "environmentId": self.env_id,
                    "rollups": part.documents(self.env_id),
                    "dropped": dropped,
                },
                timeout=30.0,
            )
            response.raise_for_status()
            for key in keys:
                del batch.rollups[key]
            batch.dropped = {}
            if not batch.rollups:
                return

    async def close(self) -> None:
        await self.client.aclose()
