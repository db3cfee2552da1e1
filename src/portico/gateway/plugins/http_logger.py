"""http-logger: batches of log entries POSTed as JSON to an HTTP endpoint."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from portico.gateway.plugins._batching import BatchingConfig
from portico.gateway.plugins.base import Category, HttpUrl, PluginSpec


class HttpLoggerConfig(BatchingConfig):
    uri: HttpUrl = Field(description="The endpoint the batches are POSTed to.")
    auth_header: str | None = Field(
        None,
        min_length=1,
        max_length=4096,
        pattern=r"^[^\r\n\x00]+$",
        description='Authorization header value sent with each batch (e.g. "Bearer ...").',
    )
    timeout: int = Field(3, ge=1, le=60, description="Seconds to wait for the endpoint.")
    include_req_body: bool = Field(False, description="Log the request body.")
    include_resp_body: bool = Field(False, description="Log the response body.")
    concat_method: Literal["json", "new_line"] = Field(
        "json",
        description='How a batch is joined: "json" sends a JSON array, "new_line" one JSON '
        "object per line.",
    )

    secret_fields = frozenset({"auth_header"})


PLUGIN = PluginSpec(
    name="http-logger",
    category=Category.OBSERVABILITY,
    order=950,
    reorderable=True,
    config=HttpLoggerConfig,
    description="POSTs batches of log entries as JSON to an HTTP endpoint.",
)
