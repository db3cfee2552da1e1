"""Per-node health state, and what counts as a success or a failure.

The classification rules are documented in :mod:`portico.gateway.health.checker`.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from portico.gateway.health.config import PassiveConfig, Thresholds
from portico.gateway.health.probe import ProbeOutcome, ProbeResult

__all__ = [
    "Counters",
    "Event",
    "Source",
    "Target",
    "classify_probe",
    "classify_report",
    "limit_of",
]

Source = Literal["active", "passive"]
Event = Literal["success", "http_failure", "tcp_failure", "timeout"]


@dataclass(slots=True)
class Counters:
    """Consecutive outcomes since the last opposite outcome or change of state."""

    successes: int = 0
    http_failures: int = 0
    tcp_failures: int = 0
    timeouts: int = 0

    def reset(self) -> None:
        self.successes = self.http_failures = self.tcp_failures = self.timeouts = 0

    def add(self, event: Event) -> int:
        """Count ``event``; the consecutive count of its kind."""
        if event == "success":
            self.http_failures = self.tcp_failures = self.timeouts = 0
            self.successes += 1
            return self.successes
        self.successes = 0
        if event == "http_failure":
            self.http_failures += 1
            return self.http_failures
        if event == "tcp_failure":
            self.tcp_failures += 1
            return self.tcp_failures
        self.timeouts += 1
        return self.timeouts


def limit_of(thresholds: Thresholds, event: Event) -> int:
    """The consecutive count of ``event`` that flips a node (0: never)."""
    if event == "success":
        return thresholds.successes
    if event == "http_failure":
        return thresholds.http_failures
    if event == "tcp_failure":
        return thresholds.tcp_failures
    return thresholds.timeouts


@dataclass(slots=True, eq=False)
class Target:
    """One probed or observed address."""

    host: str
    port: int
    healthy: bool = True
    active: Counters = field(default_factory=Counters)
    passive: Counters = field(default_factory=Counters)
    reason: str = ""
    changed_at: float | None = None
    readmit_at: float | None = None
    probes: int = 0
    probe_failures: int = 0
    last_probe: str | None = None
    reports: int = 0
    wake: asyncio.Event | None = None  # set on a change of state, while probed

    def describe(self, now: float) -> dict[str, Any]:
        return {
            "host": self.host,
            "port": self.port,
            "healthy": self.healthy,
            "reason": self.reason,
            "seconds_in_state": None
            if self.changed_at is None
            else round(now - self.changed_at, 3),
            "readmit_in": None
            if self.readmit_at is None
            else round(max(0.0, self.readmit_at - now), 3),
            "active": asdict(self.active),
            "passive": asdict(self.passive),
            "probes": self.probes,
            "probe_failures": self.probe_failures,
            "last_probe": self.last_probe,
            "reports": self.reports,
        }


def classify_probe(result: ProbeResult, thresholds: Thresholds) -> Event | None:
    """What an active probe's result counts as (None: nothing — a status in neither list)."""
    if result.outcome is ProbeOutcome.CONNECTED:
        return "success"
    if result.outcome is ProbeOutcome.TIMEOUT:
        return "timeout"
    if result.outcome is ProbeOutcome.TCP_FAILURE:
        return "tcp_failure"
    if result.status in thresholds.healthy_statuses:
        return "success"
    if result.status in thresholds.unhealthy_statuses:
        return "http_failure"
    return None


def classify_report(
    passive: PassiveConfig, status: int | None, tcp_failure: bool, timeout: bool
) -> Event | None:
    """What a live request's outcome counts as (None: nothing)."""
    if tcp_failure:
        return "tcp_failure"
    if timeout:
        return "timeout"
    if status is None:
        return None
    if passive.type == "tcp" or status in passive.thresholds.healthy_statuses:
        return "success"
    if status in passive.thresholds.unhealthy_statuses:
        return "http_failure"
    return None
