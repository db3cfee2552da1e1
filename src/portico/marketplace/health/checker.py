"""A check as the jobs run it: the API's health URL found in its document, called through
the guard, and the row that records what was seen."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx

from portico.core.egress import EgressGuard
from portico.core.settings import Settings
from portico.marketplace.connection.egress import outbound_for
from portico.marketplace.health.models import ApiHealthCheck, CheckTrigger, HealthStatus
from portico.marketplace.health.probe import Observation, probe
from portico.marketplace.health.target import health_url


@dataclass(frozen=True)
class Checker:
    guard: EgressGuard
    timeout: float
    degraded_ms: float
    health_path: str

    @classmethod
    def of(cls, settings: Settings) -> Checker:
        """Under the marketplace's egress policy (``PORTICO_MARKETPLACE_EGRESS_ALLOW``, the
        installation's own control plane allowed), as the connectors are."""
        return cls(
            guard=outbound_for(settings).guard,
            timeout=settings.marketplace_health_timeout_seconds,
            degraded_ms=settings.marketplace_health_degraded_ms,
            health_path=settings.marketplace_health_path,
        )

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=self.timeout, trust_env=False)

    async def observe(
        self, client: httpx.AsyncClient, document: dict[str, Any] | None
    ) -> tuple[str | None, Observation]:
        url, why = health_url(document, self.health_path)
        if url is None:
            return None, Observation(HealthStatus.UNKNOWN, detail=f"not called: {why}")
        return url, await probe(client, self.guard, url, degraded_ms=self.degraded_ms)


def row(
    node_id: uuid.UUID,
    url: str | None,
    seen: Observation,
    *,
    trigger: CheckTrigger,
    now: datetime,
) -> ApiHealthCheck:
    return ApiHealthCheck(
        id=uuid.uuid4(),
        node_id=node_id,
        checked_at=now,
        trigger=trigger,
        status=seen.status,
        url=url[:2048] if url is not None else None,
        http_status=seen.http_status,
        latency_ms=seen.latency_ms,
        detail=seen.detail,
    )
