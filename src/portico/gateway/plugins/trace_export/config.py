"""trace-export's configuration (the seed's fields)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from portico.gateway.plugins.base import HttpUrl, PluginConfig

# written as the other plugins write request variables ($uri, $http_x_tenant, ...)
Variable = Annotated[str, Field(pattern=r"^\$[A-Za-z][A-Za-z0-9_]{0,127}$")]


class TraceExportConfig(PluginConfig):
    endpoint: HttpUrl = Field(
        description="The OTLP/HTTP traces endpoint of the collector, e.g. "
        "http://collector:4318/v1/traces."
    )
    sample_ratio: float = Field(
        1.0,
        ge=0,
        le=1,
        description="Share of requests traced, from 0 (none) to 1 (all).",
    )
    service_name: str = Field(
        "portico",
        min_length=1,
        max_length=256,
        description="The service.name resource attribute of the spans.",
    )
    additional_attributes: list[Variable] = Field(
        default_factory=list,
        max_length=32,
        description="Request variables added to the span as attributes, e.g. "
        '["$remote_addr", "$http_x_tenant"].',
    )
