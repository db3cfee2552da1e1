"""What a gateway node tells the control plane of its upstreams' health, in the heartbeat's
``upstreamHealth`` field: for each upstream of an environment it runs, the checks its checker
runs and each target (an upstream node) as that checker sees it now.

The node's own ``/status`` shows the same checkers; this is the part the control plane keeps,
so that the console shows live health without reaching the nodes. A checker's ``version``
moves whenever a target changes state: ``signature`` changes with it, and a node reports as
soon as it sees a new one rather than at its next periodic heartbeat.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from portico.gateway.environment_runtime import EnvironmentRuntime
from portico.gateway.health.checker import HealthChecker

__all__ = ["MAX_TARGETS", "MAX_TEXT", "MAX_UPSTREAMS", "checkers_of", "report", "signature"]

#: upstreams reported per environment, targets per upstream (a discovered upstream may have
#: more): the control plane refuses longer lists
MAX_UPSTREAMS = 10_000
MAX_TARGETS = 1024
#: the longest reason or probe outcome the control plane keeps
MAX_TEXT = 200


def checkers_of(runtime: EnvironmentRuntime | None) -> dict[str, HealthChecker]:
    """The health checker of each upstream of an environment's runtime, by upstream id."""
    if runtime is None:
        return {}
    return {upstream_id: upstream.health for upstream_id, upstream in runtime.upstreams.items()}


def signature(checkers: Mapping[str, HealthChecker]) -> tuple[tuple[str, int, int], ...]:
    """Changes when any target of these checkers changes state (or a checker is replaced)."""
    return tuple(
        sorted(
            (upstream_id, id(checker), checker.version) for upstream_id, checker in checkers.items()
        )
    )


def report(checkers: Mapping[str, HealthChecker]) -> list[dict[str, Any]]:
    """The heartbeat's ``upstreamHealth``: one entry per upstream, in the wire's camelCase."""
    entries = []
    for upstream_id, checker in sorted(checkers.items())[:MAX_UPSTREAMS]:
        state = checker.snapshot()
        entries.append(
            {
                "upstreamId": upstream_id,
                "active": state["active"],
                "passive": state["passive"],
                "probing": state["probing"],
                "targets": [_target(node) for node in state["nodes"][:MAX_TARGETS]],
            }
        )
    return entries


def _target(node: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "host": node["host"],
        "port": node["port"],
        "healthy": node["healthy"],
        "reason": str(node["reason"])[:MAX_TEXT],
        "secondsInState": node["seconds_in_state"],
        "lastProbe": None if node["last_probe"] is None else str(node["last_probe"])[:MAX_TEXT],
        "probes": node["probes"],
        "probeFailures": node["probe_failures"],
        "reports": node["reports"],
    }
