"""metrics-export: Prometheus counters and histograms per route, API, consumer and status,
served on the metrics port.

As APISIX's prometheus plugin: only requests that reach a route the plugin is attached to
(globally, on the API or on the route) are counted, into the gateway's registry
(``portico.gateway.telemetry.metrics``, ``GET /metrics`` on the status listener):

- ``portico_http_requests_total{env, api, route, consumer, code, node}``
- ``portico_http_latency_seconds{type=request|upstream, env, api, route, consumer}``
- ``portico_bandwidth_bytes_total{type=ingress|egress, env, api, route, consumer}``

``env`` is the environment id, ``api``/``route`` ids (names with ``prefer_name``),
``consumer`` the consumer's name ("" when anonymous), ``node`` the upstream node that
answered ("" when none did). The plugin changes nothing in the request or the response.
"""

from __future__ import annotations

import dataclasses

from pydantic import Field

from portico.gateway.context import BasePluginRuntime, RequestContext
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec
from portico.gateway.telemetry.metrics import GatewayMetrics


class MetricsExportConfig(PluginConfig):
    prefer_name: bool = Field(
        False,
        description="Label series with route and service names instead of ids (names can "
        "change, ids cannot: dashboards keyed on names break on a rename).",
    )


PLUGIN = PluginSpec(
    name="metrics-export",
    category=Category.OBSERVABILITY,
    order=900,
    reorderable=False,
    config=MetricsExportConfig,
    description="Exports Prometheus metrics per route, API, consumer and status.",
)


class MetricsExportRuntime(BasePluginRuntime):
    """Log phase only: five updates of labelled children cached per label set (a cached
    child's ``inc`` is a fifth of a ``labels(...).inc``)."""

    def __init__(self, config: MetricsExportConfig, services: RuntimeServices) -> None:
        self.prefer_name = config.prefer_name
        self.env = services.env_id
        self.metrics = services.shared("metrics", "", GatewayMetrics)

    def log(self, ctx: RequestContext) -> None:
        route = ctx.route
        consumer = ctx.consumer
        node = ctx.upstream_addr or ""
        if ", " in node:  # nginx's list of the nodes tried: the last one answered
            node = node.rpartition(", ")[2]
        series = self.metrics.series(
            (
                self.env,
                route.api_name if self.prefer_name else route.api_id,
                route.name if self.prefer_name else route.id,
                consumer.username if consumer is not None else "",
                ctx.status,
                node,
            )
        )
        series.requests.inc()
        series.request_latency.observe(ctx.latency)
        if ctx.upstream_seconds is not None:
            series.upstream_latency.observe(ctx.upstream_seconds)
        series.ingress.inc(ctx.request_bytes)
        series.egress.inc(ctx.response_bytes)


PLUGIN = dataclasses.replace(PLUGIN, runtime=MetricsExportRuntime)
