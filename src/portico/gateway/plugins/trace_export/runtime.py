"""trace-export's per-request work (see the package's docstring), compiled with the data
plane (``portico.native``).

Apart from ``config``, which holds the plugin's pydantic model (see CONVENTIONS.md "Compiled
modules"); it reads its settings through ``TraceExportSettings`` once, when the route's chain
is built.

What a request costs, and why it is shaped so (callgrind, ``bench/bench_instructions.py``):
the access phase takes a ready-made ``traceparent`` (``Traceparents``: 256 made at a time, in
C, from one draw of the kernel's random bytes, sampling decided there) and hands it to the
upstream as it is; the log phase writes the span's protobuf bytes in one call
(``wire.span``, C) and queues them; a batch is those bytes framed once (``wire.
export_request``) and POSTed by the data plane's own HTTP client (``http.upstream``) rather
than httpx, which cost ~2.4 million instructions a batch.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from dataclasses import dataclass
from typing import Final, Protocol
from urllib.parse import quote, urlsplit

from portico.gateway.context import BasePluginRuntime, RequestContext
from portico.gateway.egress import EgressGuard, EgressRefused
from portico.gateway.http.upstream import UpstreamPool, UpstreamResponse
from portico.gateway.http.upstream_contract import Timeouts
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.trace_export import wire
from portico.gateway.plugins.trace_export.propagation import (
    child_of,
    parse_traceparent,
    ratio_bound,
)
from portico.gateway.snapshot import SnapshotRoute
from portico.gateway.telemetry.batch import BatchFailed, BatchProcessor
from portico.gateway.telemetry.metrics import GatewayMetrics

NAME: Final = "trace-export"
#: the instrumentation scope of the gateway's spans
SCOPE: Final = "portico.gateway"
#: routes whose ``http.route`` a runtime remembers (a snapshot has this many, rarely more)
MAX_ROUTES: Final = 4096
#: seconds to wait for the collector (connecting, sending, its answer: each, and in all)
EXPORT_TIMEOUT: Final = 10.0
#: how much of the collector's answer is read (an ExportTraceServiceResponse is a few bytes)
MAX_ANSWER_BYTES: Final = 64 * 1024
#: new traces' traceparents made per draw of random bytes (one getrandom() call)
DRAWN: Final = 256
#: (Final aliases: see CONVENTIONS.md "Compiled modules")
_time_ns: Final = time.time_ns
_urandom: Final = os.urandom
_traceparents: Final = wire.traceparents
_span: Final = wire.span
_export_request: Final = wire.export_request


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


class Traceparents:
    """The ``traceparent`` values of new traces (random trace and span ids, the sampling
    decision by ``bound``: see ``wire.traceparents``), made ``DRAWN`` at a time from one
    draw of the kernel's random bytes: a getrandom() call per request would cost more than
    the rest of making its ids. The ids are not secrets (the OpenTelemetry SDK draws them
    from ``random``); they only have to be unique. Filled on first use, so that a process
    forked before then draws its own."""

    __slots__ = ("_at", "_bound", "_made")

    def __init__(self, bound: int) -> None:
        self._bound = bound
        self._made: list[str] = []
        self._at = 0

    def next(self) -> str:
        at = self._at
        made = self._made
        if at >= len(made):
            made = self._made = _traceparents(_urandom(24 * DRAWN), self._bound)
            at = 0
        self._at = at + 1
        return made[at]


class RouteName:
    """A route's ``http.route`` (its ``uri``), read once: the route is a pydantic model, and
    a generic attribute read costs ~360 instructions a request."""

    __slots__ = ("route", "uri")

    def __init__(self, route: SnapshotRoute) -> None:
        self.route = route  # kept so that ``id(route)`` cannot be reused while cached
        self.uri = route.uri


class TraceExportRuntime(BasePluginRuntime):
    def __init__(self, config: TraceExportSettings, services: RuntimeServices) -> None:
        self.new = Traceparents(ratio_bound(config.sample_ratio))
        self.extra = [name[1:] for name in config.additional_attributes]  # "$" dropped
        self.batch = _export(config, services).batch
        self._routes: dict[int, RouteName] = {}
        self._last: RouteName | None = None  # a runtime usually serves one route

    def _begin(self, ctx: RequestContext) -> str:
        """The request's ``traceparent`` (the upstream's), kept on the context for the log
        phase and sent by ``upstream_request.extra_headers``: a new trace's, or one in the
        client's trace when its header is valid (parent-based sampling: the client's
        decision is obeyed). (Fields of the context rather than ``vars`` and
        ``upstream_headers``: two dicts a request, ~1,000 instructions, measured.)"""
        incoming: str | None = None
        for name, value in ctx.request.headers:  # (names are lower-case)
            if name == "traceparent":
                incoming = value
                break
        made = self.new.next()
        if incoming is not None:
            parent = parse_traceparent(incoming)
            if parent is not None:
                made = child_of(parent, made)
                ctx.trace_parent_id = parent.span_id
        ctx.traceparent = made
        return made

    def access(self, ctx: RequestContext) -> None:
        # (sent instead of the client's: its tracestate travels on untouched)
        self._begin(ctx)
        return None

    def _route_name(self, route: SnapshotRoute) -> str:
        last = self._last
        if last is not None and last.route is route:
            return last.uri
        known = self._routes.get(id(route))
        if known is None:
            if len(self._routes) >= MAX_ROUTES:
                self._routes.clear()
            known = self._routes[id(route)] = RouteName(route)
        self._last = known
        return known.uri

    def log(self, ctx: RequestContext) -> None:
        traceparent = ctx.traceparent
        if traceparent is None:  # an earlier plugin answered before this one's access phase
            traceparent = self._begin(ctx)
        if traceparent[54] != "1":  # flags 00: not sampled (an index: endswith costs more)
            return
        request = ctx.request
        parent = ctx.trace_parent_id
        agent: str | None = None
        state = ""
        for name, value in request.headers:  # one pass for both (names are lower-case)
            if name == "user-agent":
                agent = value
            elif name == "tracestate" and parent:  # (the state of the client's trace only:
                state = value  # a new trace has none, whatever came with a bad traceparent)
        extra: list[tuple[str, str]] | None = None
        if self.extra:
            extra = [(n, v) for n in self.extra if (v := ctx.var(n)) is not None]
        end = _time_ns()
        span = _span(
            traceparent,
            parent,
            state,
            end - int(ctx.latency * 1e9),
            end,
            request.method,
            request.path,
            request.scheme,
            self._route_name(ctx.route),
            ctx.host,
            ctx.client_ip,
            request.http_version,
            ctx.status,
            agent,
            extra,
        )
        self.batch.push(span, len(span))


class SpanExport:
    """A configuration's spans on their way out: its batch processor and the connections its
    batches go through, shared across config swaps (a deploy keeps the spans waiting). At
    its end (a configuration no longer used, the gateway stopping) what is pending is sent,
    then the connections are closed."""

    def __init__(self, config: TraceExportSettings, services: RuntimeServices) -> None:
        metrics = services.shared("metrics", "", GatewayMetrics)
        # (TLS: the default context, certificates verified, made at the first connection)
        self.pool = UpstreamPool(max_idle_per_host=2, idle_timeout=30.0)
        send = Sender(config.endpoint, config.service_name, self.pool, services.egress)
        self.batch: BatchProcessor[bytes] = BatchProcessor(
            NAME, SpanBatching(), send, dropped=metrics.dropped_counter(NAME), close_grace=5.0
        )

    async def aclose(self) -> None:
        await self.batch.aclose()
        await self.pool.close()


def _export(config: TraceExportSettings, services: RuntimeServices) -> SpanExport:
    key = hashlib.sha256(f"{NAME}\0{config.model_dump_json()}".encode()).hexdigest()
    return services.shared("batch", key, lambda: SpanExport(config, services))


class Sender:
    """The batch processor's ``send``: a batch as one OTLP/HTTP request
    (``ExportTraceServiceRequest`` in protobuf), POSTed to the address the SSRF guard
    permitted for the endpoint's host (resolved and checked for each batch), its name kept
    as the Host header and TLS server name (certificates verified), on a kept-alive
    connection of the data plane's own HTTP client. A refused destination, a timeout or a
    non-2xx answer is a ``BatchFailed``; a transport error propagates (the processor counts
    both: retried once, then dropped and counted). (An object rather than a closure: see
    CONVENTIONS.md "Compiled modules".)"""

    def __init__(
        self, endpoint: str, service_name: str, pool: UpstreamPool, guard: EgressGuard
    ) -> None:
        parts = urlsplit(endpoint)  # validated: http(s), a host, no credentials
        self.endpoint = endpoint
        self.service_name = service_name
        self.pool = pool
        self.guard = guard
        self.timeouts = Timeouts(EXPORT_TIMEOUT, EXPORT_TIMEOUT, EXPORT_TIMEOUT)
        tls = parts.scheme == "https"
        hostname = parts.hostname or ""
        port = parts.port or (443 if tls else 80)
        authority = f"[{hostname}]" if ":" in hostname else hostname
        if port != (443 if tls else 80):
            authority = f"{authority}:{port}"
        # (quoted as a request line must be; what is already escaped stays as it is)
        target = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
        if parts.query:
            target = f"{target}?{quote(parts.query, safe='/?%:@!$&()*+,;=-._~')}"
        self.head = (
            f"POST {target} HTTP/1.1\r\nhost: {authority}\r\n"
            "content-type: application/x-protobuf\r\n"
        )

    async def __call__(self, spans: list[bytes]) -> None:
        body = _export_request(self.service_name, SCOPE, spans)
        head = f"{self.head}content-length: {len(body)}\r\n\r\n".encode("latin-1")
        try:
            destination = await self.guard.destination(self.endpoint)
            async with asyncio.timeout(EXPORT_TIMEOUT):  # the whole exchange, at most
                response = await self.pool.request(
                    destination.address,
                    destination.port,
                    "POST",
                    head,
                    body,
                    len(body),
                    self.timeouts,
                    tls=destination.scheme == "https",
                    server_hostname=destination.hostname,
                )
                await _read_answer(response)
        except EgressRefused as error:
            raise BatchFailed(f"refused by the egress guard: {error}") from None
        except TimeoutError:
            raise BatchFailed(f"no answer within {EXPORT_TIMEOUT:g} s") from None
        if not 200 <= response.status < 300:
            raise BatchFailed(f"the collector answered {response.status}")


async def _read_answer(response: UpstreamResponse) -> None:
    """Read the answer's body (nothing in it is used), so that its connection goes back to
    the pool; past ``MAX_ANSWER_BYTES`` the connection is dropped instead."""
    if response.complete is not None:
        return
    size = 0
    async for chunk in response.body:
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            response.close()
            return
