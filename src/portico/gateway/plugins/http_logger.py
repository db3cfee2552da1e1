"""http-logger: batches of log entries POSTed as JSON to an HTTP endpoint.

Entries are APISIX's full log format (``portico.gateway.telemetry.log_entry``: credentials
redacted), batched by ``portico.gateway.telemetry.batch``. A batch is one POST to ``uri`` with
``content-type: application/json`` and ``auth_header`` as ``Authorization``: a JSON array of
entries (``concat_method: json``; always an array, even of one entry, so a receiver parses one
shape — APISIX sends a lone entry as a bare object) or one JSON object per line
(``new_line``).
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from pydantic import Field

from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._batching import BatchingConfig
from portico.gateway.plugins._log_sink import (
    EntryBatch,
    HttpPoster,
    LoggerRuntime,
    Sink,
)
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


class HttpLoggerRuntime(LoggerRuntime):
    """One entry per request into the batch processor of its configuration
    (``_log_sink.LoggerRuntime``), which POSTs batches to ``uri`` through the SSRF guard. A
    non-2xx answer, a timeout or a refused destination is a failed send (retried, then
    dropped and counted); the request is never affected."""

    def __init__(self, config: HttpLoggerConfig, services: RuntimeServices) -> None:
        poster = HttpPoster(services)
        super().__init__(
            PLUGIN.name,
            config,
            services,
            _sink(config, poster),
            between=b"," if config.concat_method == "json" else b"\n",
            request_body=config.include_req_body,
            response_body=config.include_resp_body,
            close_grace=min(5.0, float(config.timeout)),
        )
        poster.shared(services, PLUGIN.name, config)


def _sink(config: HttpLoggerConfig, poster: HttpPoster) -> Sink:
    """POST one batch: a JSON array, or one object per line (``new_line``)."""
    headers = {"content-type": "application/json"}
    if config.auth_header:
        headers["authorization"] = config.auth_header
    as_array = config.concat_method == "json"
    timeout = float(config.timeout)

    async def send(batch: EntryBatch) -> None:
        # the batch's entries were written joined (``between``): its buffer is sent as it
        # is, the array's brackets around it (a copy of the batch costs as much as its POST)
        entries = batch.view()
        body = (b"[", entries, b"]") if as_array else (entries,)
        await poster.post(config.uri, body, headers, timeout)

    return send


PLUGIN = dataclasses.replace(PLUGIN, runtime=HttpLoggerRuntime)
