"""``specification.checks`` read into plain, typed settings for the health checker.

The control plane has validated the object and filled in APISIX's defaults; the same
defaults are repeated here (from ``management/upstream/healthcheck.py``, which the runtime
does not import) so that a hand-written specification in a test or a file works too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ActiveConfig", "PassiveConfig", "Thresholds", "fingerprint"]

_ACTIVE_HEALTHY_STATUSES = (200, 302)
_ACTIVE_UNHEALTHY_STATUSES = (429, 404, 500, 501, 502, 503, 504, 505)
_PASSIVE_HEALTHY_STATUSES = (*range(200, 209), 226, *range(300, 309))
_PASSIVE_UNHEALTHY_STATUSES = (429, 500, 503)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Consecutive counts that flip a node; 0 disables a counter (passive only)."""

    successes: int
    http_failures: int
    tcp_failures: int
    timeouts: int
    healthy_statuses: frozenset[int]
    unhealthy_statuses: frozenset[int]


@dataclass(frozen=True, slots=True)
class ActiveConfig:
    type: str
    http_path: str
    host: str | None
    port: int | None
    timeout: float
    concurrency: int
    healthy_interval: float
    unhealthy_interval: float
    thresholds: Thresholds

    @classmethod
    def read(cls, active: Mapping[str, Any]) -> ActiveConfig:
        healthy = active.get("healthy") or {}
        unhealthy = active.get("unhealthy") or {}
        return cls(
            type=str(active.get("type", "http")),
            http_path=str(active.get("http_path", "/")),
            host=active.get("host"),
            port=active.get("port"),
            timeout=float(active.get("timeout", 1)),
            concurrency=int(active.get("concurrency", 10)),
            healthy_interval=float(healthy.get("interval", 1)),
            unhealthy_interval=float(unhealthy.get("interval", 1)),
            thresholds=Thresholds(
                successes=int(healthy.get("successes", 2)),
                http_failures=int(unhealthy.get("http_failures", 5)),
                tcp_failures=int(unhealthy.get("tcp_failures", 2)),
                timeouts=int(unhealthy.get("timeouts", 3)),
                healthy_statuses=frozenset(healthy.get("http_statuses", _ACTIVE_HEALTHY_STATUSES)),
                unhealthy_statuses=frozenset(
                    unhealthy.get("http_statuses", _ACTIVE_UNHEALTHY_STATUSES)
                ),
            ),
        )


@dataclass(frozen=True, slots=True)
class PassiveConfig:
    type: str
    thresholds: Thresholds

    @classmethod
    def read(cls, passive: Mapping[str, Any]) -> PassiveConfig:
        healthy = passive.get("healthy") or {}
        unhealthy = passive.get("unhealthy") or {}
        return cls(
            type=str(passive.get("type", "http")),
            thresholds=Thresholds(
                successes=int(healthy.get("successes", 5)),
                http_failures=int(unhealthy.get("http_failures", 5)),
                tcp_failures=int(unhealthy.get("tcp_failures", 2)),
                timeouts=int(unhealthy.get("timeouts", 7)),
                healthy_statuses=frozenset(healthy.get("http_statuses", _PASSIVE_HEALTHY_STATUSES)),
                unhealthy_statuses=frozenset(
                    unhealthy.get("http_statuses", _PASSIVE_UNHEALTHY_STATUSES)
                ),
            ),
        )


def fingerprint(specification: Mapping[str, Any]) -> str:
    """What a health checker depends on: ``checks`` and the node addresses (or discovery).

    Two specifications with the same fingerprint can share one checker, so its state
    survives deploys that change routes, plugins, weights, timeouts or the algorithm.
    """
    nodes = sorted(
        (str(node["host"]), int(node["port"])) for node in specification.get("nodes") or ()
    )
    document = {
        "checks": specification.get("checks"),
        "nodes": nodes,
        "discovery": specification.get("discovery"),
    }
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()
