"""aggregator-logger: log entries pushed to Grafana Loki's push API."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from portico.gateway.plugins._batching import BatchingConfig
from portico.gateway.plugins.base import Category, HttpUrl, PluginSpec

LabelName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]  # Prometheus's
LabelValue = Annotated[str, Field(min_length=1, max_length=1024)]


class AggregatorLoggerConfig(BatchingConfig):
    endpoint_addrs: list[HttpUrl] = Field(
        min_length=1,
        max_length=16,
        description='Loki addresses, e.g. ["http://loki:3100"]; each batch goes to one of '
        "them. An array: a single endpoint_addr is not accepted.",
    )
    endpoint_uri: str = Field(
        "/loki/api/v1/push",
        max_length=1024,
        pattern=r"^/[^\s?#]*$",
        description="Path of the push API on each address.",
    )
    # Loki's own rule: up to 150 bytes of alphanumerics and !-_.*'(); "fake" is the tenant
    # of a Loki without multi-tenancy (and APISIX's loki-logger default)
    tenant_id: str = Field(
        "fake",
        pattern=r"^[A-Za-z0-9!._*'()-]{1,150}$",
        description="Tenant sent as X-Scope-OrgID.",
    )
    log_labels: dict[LabelName, LabelValue] = Field(
        default_factory=lambda: {"job": "portico"},
        min_length=1,
        max_length=32,
        description="Labels of the log stream.",
    )
    timeout: int = Field(
        3000, ge=1, le=60_000, description="Milliseconds to wait for Loki (as APISIX)."
    )


PLUGIN = PluginSpec(
    name="aggregator-logger",
    category=Category.OBSERVABILITY,
    order=953,
    reorderable=True,
    config=AggregatorLoggerConfig,
    description="Pushes log entries to Loki's push API with a tenant id.",
)
