"""What telemetry keys a route's requests by: a module of its own, read by the request's
context and written by telemetry's recorder (``telemetry.rollups``), which the context cannot
import (telemetry imports the context)."""

from __future__ import annotations

from typing import Final


class RouteKeys:
    """What telemetry keys a route's requests by (its environment, API and route ids), made
    once per route (``RouteRuntime.rollup_keys``, passed on as ``RequestContext.rollup_keys``),
    and the rollup its last request counted in with the rest of that rollup's key: the next
    request that would make the same key counts there without building the key nor looking
    it up (at 10,000 routes that lookup, in the table of every route's rollups, cost a few
    cache misses a request). The memo holds for one recorder and one generation of its
    pending rollups (``TelemetryRecorder.take`` starts a new one)."""

    __slots__ = (
        "api_id",
        "app_id",
        "developer_id",
        "env_id",
        "generation",
        "method",
        "minute",
        "product_id",
        "recorder",
        "rollup",
        "route_id",
        "status",
        "username",
    )

    def __init__(self, env_id: str, api_id: str, route_id: str) -> None:
        self.env_id = env_id
        self.api_id = api_id
        self.route_id = route_id
        self.recorder: object = None
        self.generation = -1
        self.rollup: object = None  # (a telemetry.rollups.Rollup)
        self.minute = 0
        self.status = 0
        self.method = ""
        self.username = ""
        self.app_id = ""
        self.product_id = ""
        self.developer_id = ""


#: the keys of a request no route's runtime gave any (a context made by hand)
NO_ROUTE_KEYS: Final = RouteKeys("", "", "")
