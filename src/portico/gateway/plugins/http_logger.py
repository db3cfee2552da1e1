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
import json
from collections.abc import Awaitable, Callable
from typing import Literal

import httpx
from pydantic import Field

from portico.gateway.context import BasePluginRuntime, Reply, RequestContext, ResponseHeaders
from portico.gateway.egress import EgressGuard, EgressRefused
from portico.gateway.outbound import guarded_request
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._batching import BatchingConfig, batch_processor
from portico.gateway.plugins.base import Category, HttpUrl, PluginSpec
from portico.gateway.telemetry.batch import BatchFailed
from portico.gateway.telemetry.log_entry import (
    Redaction,
    capture_request_body,
    capture_response,
    full_log,
)


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


class HttpLoggerRuntime(BasePluginRuntime):
    """Queues one entry per request (log phase: memory only) into the batch processor of its
    configuration, which POSTs batches to ``uri`` through the SSRF guard. A non-2xx answer,
    a timeout or a refused destination is a failed send (retried, then dropped and counted);
    the request is never affected."""

    def __init__(self, config: HttpLoggerConfig, services: RuntimeServices) -> None:
        self.config = config
        self.env_id = services.env_id
        self.node_id = services.node_id
        self.now = services.now
        self.redaction = Redaction.for_route(None)
        self.batch = batch_processor(
            PLUGIN.name,
            config,
            services,
            _sender(config, services.http(), services.egress),
            weigh=len,
            close_grace=min(5.0, float(config.timeout)),
        )

    async def access(self, ctx: RequestContext) -> Reply | None:
        if self.config.include_req_body:
            await capture_request_body(ctx)
        return None

    def header_filter(self, ctx: RequestContext, status: int, headers: ResponseHeaders) -> None:
        capture_response(ctx, headers, self.config.include_resp_body)

    def log(self, ctx: RequestContext) -> None:
        redaction = self.redaction
        if redaction.route_id != ctx.route.id:  # a chain serves one route: once per snapshot
            redaction = self.redaction = Redaction.for_route(ctx.route)
        entry = full_log(
            ctx,
            redaction,
            env_id=self.env_id,
            node_id=self.node_id,
            now=self.now(),
            request_body=self.config.include_req_body,
            response_body=self.config.include_resp_body,
        )
        self.batch.push(json.dumps(entry, separators=(",", ":"), default=str).encode())


def _sender(
    config: HttpLoggerConfig, client: httpx.AsyncClient, guard: EgressGuard
) -> Callable[[list[bytes]], Awaitable[None]]:
    """POST one batch: a JSON array, or one object per line (``new_line``)."""
    headers = {"content-type": "application/json"}
    if config.auth_header:
        headers["authorization"] = config.auth_header
    as_array = config.concat_method == "json"
    timeout = float(config.timeout)

    async def send(entries: list[bytes]) -> None:
        body = b"[" + b",".join(entries) + b"]" if as_array else b"\n".join(entries)
        http = client
        if http.is_closed:  # the shared client went first at shutdown: a last flush alone
            http = httpx.AsyncClient(trust_env=False)
        try:
            response = await guarded_request(
                http, guard, "POST", config.uri, content=body, headers=headers, timeout=timeout
            )
        except EgressRefused as error:
            raise BatchFailed(f"refused by the egress guard: {error}") from None
        finally:
            if http is not client:
                await http.aclose()
        if not 200 <= response.status_code < 300:
            raise BatchFailed(f"the endpoint answered {response.status_code}")

    return send


PLUGIN = dataclasses.replace(PLUGIN, runtime=HttpLoggerRuntime)
