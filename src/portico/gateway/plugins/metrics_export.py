"""metrics-export: Prometheus counters and histograms per route, API, consumer and status,
served on the metrics port."""

from __future__ import annotations

from pydantic import Field

from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec


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
