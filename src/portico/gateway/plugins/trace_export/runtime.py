"""trace-export's per-request work (see the package's docstring), compiled with the data
plane (``portico.native``).

Apart from ``config``, which holds the plugin's pydantic model (see CONVENTIONS.md "Compiled
modules"); it reads its settings through ``TraceExportSettings`` once, when the route's chain
is built.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Final, Protocol

import httpx

from portico.gateway.context import BasePluginRuntime, RequestContext
from portico.gateway.egress import EgressGuard, EgressRefused
from portico.gateway.outbound import guarded_request
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.trace_export.propagation import (
    new_id,
    parse_traceparent,
    ratio_bound,
    sampled_by_ratio,
    traceparent,
)
from portico.gateway.plugins.trace_export.span import SCOPE, SpanRecord
from portico.gateway.plugins.trace_export.wire import encode
from portico.gateway.telemetry.batch import BatchFailed, BatchProcessor
from portico.gateway.telemetry.metrics import GatewayMetrics

NAME: Final = "trace-export"
#: where the access phase leaves the request's trace for the log phase
_TRACE: Final = "_trace_export"
#: seconds to wait for the collector
EXPORT_TIMEOUT: Final = 10.0
#: (a Final alias: see CONVENTIONS.md "Compiled modules")
_time_ns: Final = time.time_ns


class TraceExportSettings(Protocol):
    """What the runtime reads of ``config.TraceExportConfig``."""

    @property
    def endpoint(self) -> str: ...

    @property
    def sample_ratio(self) -> float: ...

    @property
    def service_name(self) -> str: ...

    @property
    def additional_attributes(self) -> list[str]: ...

    def model_dump_json(self) -> str: ...


@dataclass(frozen=True)
class SpanBatching:
    """The batch processor's settings for spans (the seed gives trace-export no batch
    fields): 512 spans a batch, as the OpenTelemetry SDK's BatchSpanProcessor exports, sent
    after 1 s without a new span or 5 s after the oldest; one retry."""

    batch_max_size: int = 512
    inactive_timeout: int = 1
    buffer_duration: int = 5
    max_retry_count: int = 1
    retry_delay: int = 1


class _Trace:
    __slots__ = ("parent_span_id", "sampled", "span_id", "trace_id")

    def __init__(self, trace_id: int, span_id: int, parent_span_id: int, sampled: bool) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_span_id = parent_span_id
        self.sampled = sampled


class TraceExportRuntime(BasePluginRuntime):
    def __init__(self, config: TraceExportSettings, services: RuntimeServices) -> None:
        self.bound = ratio_bound(config.sample_ratio)
        self.extra = [name[1:] for name in config.additional_attributes]  # "$" dropped
        self.batch = _processor(config, services)

    def _trace(self, ctx: RequestContext) -> _Trace:
        parent = parse_traceparent(ctx.request.header("traceparent"))
        span_id = new_id(64)
        if parent is None:
            trace_id = new_id(128)
            return _Trace(trace_id, span_id, 0, sampled_by_ratio(trace_id, self.bound))
        return _Trace(parent.trace_id, span_id, parent.span_id, parent.sampled)

    def access(self, ctx: RequestContext) -> None:
        trace = self._trace(ctx)
        ctx.vars[_TRACE] = trace
        if trace.parent_span_id:  # the client's header is replaced, not repeated
            ctx.remove_upstream_headers.add("traceparent")
        ctx.upstream_headers["traceparent"] = traceparent(
            trace.trace_id, trace.span_id, trace.sampled
        )
        return None

    def log(self, ctx: RequestContext) -> None:
        trace: _Trace | None = ctx.vars.get(_TRACE)
        if trace is None:  # an earlier plugin answered before this one's access phase
            trace = self._trace(ctx)
        if not trace.sampled:
            return
        request = ctx.request
        agent = state = None
        for name, value in request.headers:  # one pass for both (names are lower-case)
            if name == "user-agent":
                agent = value
            elif name == "tracestate":
                state = value
        extra: list[tuple[str, str | int]] | None = None
        if self.extra:
            extra = [(n, v) for n in self.extra if (v := ctx.var(n)) is not None]
        end = _time_ns()
        self.batch.push(
            SpanRecord(
                trace.trace_id,
                trace.span_id,
                trace.parent_span_id,
                state or "",
                end - int(ctx.latency * 1e9),
                end,
                request.method,
                request.path,
                request.scheme,
                ctx.route.uri,
                ctx.host,
                ctx.client_ip,
                request.http_version,
                ctx.status,
                agent,
                extra,
            )
        )


def _processor(
    config: TraceExportSettings, services: RuntimeServices
) -> BatchProcessor[SpanRecord]:
    """The processor of this configuration, shared across config swaps (a deploy keeps the
    spans waiting), its drops counted in the gateway's metrics."""
    metrics = services.shared("metrics", "", GatewayMetrics)
    key = hashlib.sha256(f"{NAME}\0{config.model_dump_json()}".encode()).hexdigest()
    send = _Sender(config.endpoint, config.service_name, services.http(), services.egress)
    return services.shared(
        "batch",
        key,
        lambda: BatchProcessor(
            NAME, SpanBatching(), send, dropped=metrics.dropped_counter(NAME), close_grace=5.0
        ),
    )


class _Sender:
    """The batch processor's ``send``: a batch encoded as OTLP protobuf, POSTed through the
    SSRF guard. (An object rather than a closure: see CONVENTIONS.md "Compiled modules".)"""

    def __init__(
        self, endpoint: str, service_name: str, client: httpx.AsyncClient, guard: EgressGuard
    ) -> None:
        self.endpoint = endpoint
        self.service_name = service_name
        self.client = client
        self.guard = guard
        self.headers = {"content-type": "application/x-protobuf"}

    async def __call__(self, records: list[SpanRecord]) -> None:
        body = encode(self.service_name, SCOPE, records)
        client = self.client
        http = client
        if http.is_closed:  # the shared client went first at shutdown: a last flush alone
            http = httpx.AsyncClient(trust_env=False)
        try:
            response = await guarded_request(
                http,
                self.guard,
                "POST",
                self.endpoint,
                content=body,
                headers=self.headers,
                timeout=EXPORT_TIMEOUT,
            )
        except EgressRefused as error:
            raise BatchFailed(f"refused by the egress guard: {error}") from None
        finally:
            if http is not client:
                await http.aclose()
        if not 200 <= response.status_code < 300:
            raise BatchFailed(f"the collector answered {response.status_code}")
