"""The loggers' entry: APISIX's full log format, with credentials redacted.

Every logger (http-logger and the other four) sends the same entry::

    {"request": {"method", "uri", "url", "headers", "querystring", "size", "body"?},
     "response": {"status", "headers", "size", "body"?},
     "upstream", "latency", "upstream_latency", "client_ip", "start_time", "request_id",
     "route_id", "route_name", "api_id", "api_name", "environment_id",
     "consumer": {"username"}?, "server": {"hostname", "version"}}

Latencies are milliseconds, ``start_time`` milliseconds since the epoch, sizes body bytes.
Credentials never reach a sink: ``Authorization``, ``Cookie``, ``Set-Cookie``, API-key and
token headers and query arguments — including the header and argument names the route's own
authentication plugins read — are replaced by ``[REDACTED]`` (in ``uri`` and ``url`` too).

Bodies are logged only when a logger asks (``include_req_body``/``include_resp_body``), at
most :data:`MAX_LOGGED_BODY` bytes (APISIX's ``max_req_body_bytes`` default). A request body
is read before proxying only when its declared length is within that bound — a larger or
chunked upload keeps streaming and is not logged; a response body is copied by a body filter
as it passes (a tee: the client's stream is untouched).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import parse_qsl, unquote_plus

from mypy_extensions import mypyc_attr

from portico import __version__
from portico.gateway.context import (
    EXPOSED,
    Access,
    BasePluginRuntime,
    RelayedHead,
    RequestContext,
    ResponseHeaders,
)
from portico.gateway.http.errors import ClientError
from portico.gateway.snapshot import SnapshotRoute
from portico.gateway.telemetry.batch import BatchProcessor

#: (Final aliases: see CONVENTIONS.md "Compiled modules")
_clock: Final = time.perf_counter

REDACTED: Final = "[REDACTED]"
MAX_LOGGED_BODY: Final = 512 * 1024

# shared by every logger of a request: the body is read (or copied) once
_REQUEST_BODY: Final = "_log.request_body"
_RESPONSE_BODY: Final = "_log.response_body"
_RESPONSE_HEADERS: Final = "_log.response_headers"

_SECRET_HEADERS: Final = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "apikey", "x-csrf-token"}
)
_SECRET_ARGS: Final = frozenset({"apikey", "jwt", "key", "code", "sig", "signature", "password"})
#: a header or argument whose name holds one of these is a credential whatever else it says
_SECRET_PARTS: Final = (
    "auth",
    "token",
    "secret",
    "passw",
    "api-key",
    "api_key",
    "apikey",
    "session",
    "credential",
    "cookie",
)
#: header names whose verdict a route's Redaction remembers
_MAX_KNOWN_NAMES: Final = 512
#: what a request waiting in a batch holds besides its bodies, roughly (its context, request
#: and header lists), for the batch's memory bound
_RETAINED_ESTIMATE: Final = 2048
#: plugins that read a credential from a configurable header / query argument
_CREDENTIAL_FIELDS: Final = {
    "key-auth": ("header", "query"),
    "jwt-auth": ("header", "query"),
    "csrf": ("name", None),
}


def _secret_name(name: str, exact: frozenset[str]) -> bool:
    return name in exact or any(part in name for part in _SECRET_PARTS)


class Redaction:
    """What is secret on one route: the defaults plus the names its authentication plugins
    read (key-auth's ``header``/``query``...). Built once per route (see :meth:`for_route`)."""

    __slots__ = ("args", "headers", "route_id", "secret_headers")

    def __init__(self, route_id: str | None, headers: frozenset[str], args: frozenset[str]) -> None:
        self.route_id = route_id
        self.headers = headers
        self.args = args
        #: header name → whether it is secret: the same few names come with every request,
        #: and the substring scan of ``_secret_name`` was a third of an entry's cost
        self.secret_headers: dict[str, bool] = {}

    @classmethod
    def for_route(cls, route: SnapshotRoute | None) -> Redaction:
        """``None``: the defaults only."""
        headers, args = set(_SECRET_HEADERS), set(_SECRET_ARGS)
        for attachment in route.plugins if route is not None else ():
            fields = _CREDENTIAL_FIELDS.get(attachment.name)
            if fields is None:
                continue
            header, arg = (attachment.config.get(f) if f else None for f in fields)
            if isinstance(header, str):
                headers.add(header.lower())
            if isinstance(arg, str):
                args.add(arg.lower())
        return cls(route.id if route else None, frozenset(headers), frozenset(args))

    def header_map(self, items: list[tuple[str, str]]) -> dict[str, Any]:
        """Headers as APISIX logs them: name → value, or → list of values when repeated."""
        out: dict[str, Any] = {}
        verdicts = self.secret_headers
        for name, value in items:
            secret = verdicts.get(name)
            if secret is None:
                secret = _secret_name(name, self.headers)
                if len(verdicts) < _MAX_KNOWN_NAMES:  # names are the client's: bounded
                    verdicts[name] = secret
            if secret:
                value = REDACTED
            known = out.get(name)
            if known is None:
                out[name] = value
            elif isinstance(known, list):
                known.append(value)
            else:
                out[name] = [known, value]
        return out

    def query(self, query: str) -> tuple[dict[str, Any], str]:
        """The arguments (name → value or list) and the query string as received, secret
        values redacted."""
        if not query:
            return {}, ""
        args: dict[str, Any] = {}
        for name, value in parse_qsl(query, keep_blank_values=True):
            if _secret_name(name.lower(), self.args):
                value = REDACTED
            known = args.get(name)
            if known is None:
                args[name] = value
            elif isinstance(known, list):
                known.append(value)
            else:
                args[name] = [known, value]
        parts = query.split("&")
        for index, part in enumerate(parts):
            raw_name = part.partition("=")[0]
            if _secret_name(unquote_plus(raw_name).lower(), self.args):
                parts[index] = f"{raw_name}={REDACTED}"
        return args, "&".join(parts)


# ---------------------------------------------------------------------- capture (per phase)


async def capture_request_body(ctx: RequestContext) -> None:
    """Access phase: keep the request body for the log when it is small enough to buffer
    (``read`` leaves it in place for the proxy)."""
    if _REQUEST_BODY in ctx.vars:
        return
    request = ctx.request
    length = request.content_length
    if length is None or length > MAX_LOGGED_BODY:
        ctx.vars[_REQUEST_BODY] = None
        return
    try:
        ctx.vars[_REQUEST_BODY] = await request.body.read() if length else b""
    except ClientError:  # the proxy meets the same error and answers it
        ctx.vars[_REQUEST_BODY] = None


def capture_response(ctx: RequestContext, headers: ResponseHeaders, body: bool) -> None:
    """Header filter: remember the response headers (as finally sent: later filters still
    change this object) and, if ``body``, copy the body as it passes. (An answer relayed as
    it came skips it when no body is logged: its head is ``ctx.response_head``.)"""
    ctx.vars.setdefault(_RESPONSE_HEADERS, headers)
    if body and _RESPONSE_BODY not in ctx.vars:
        kept = ctx.vars[_RESPONSE_BODY] = bytearray()

        def tee(_: RequestContext, chunk: bytes, last: bool) -> bytes:
            room = MAX_LOGGED_BODY - len(kept)
            if room > 0 and chunk:
                kept.extend(chunk[:room])
            return chunk

        ctx.body_filters.append(tee)


# ---------------------------------------------------------------------- the entry


def _text(data: bytes | bytearray | None) -> str | None:
    return None if data is None else bytes(data).decode("utf-8", "replace")


#: a latency whose microseconds lie this close to a half is rounded by ``round`` itself
_TIE: Final = 1e-6
#: beyond this many microseconds (about 17 minutes), too
_MAX_MICROS: Final = 1e9


def _millis(seconds: float) -> float:
    """``round(seconds * 1000, 3)``, the same float, at a tenth of the cost: ``round`` with
    digits converts through decimal text (measured with callgrind: 2,600 instructions a call,
    two calls an entry). The microseconds are rounded as a float and divided back, which
    gives the same double (a division is correctly rounded) unless the product's own rounding
    could change the side of a half: then ``round`` decides."""
    millis = seconds * 1000
    micros = millis * 1000.0
    if not 0.0 <= micros < _MAX_MICROS:
        return round(millis, 3)
    whole = int(micros)
    fraction = micros - whole
    if -_TIE < fraction - 0.5 < _TIE:
        return round(millis, 3)
    if fraction > 0.5:
        whole += 1
    return whole / 1000


def full_log(
    ctx: RequestContext,
    redaction: Redaction,
    *,
    env_id: str,
    node_id: str,
    start_time: int,
    request_body: bool = False,
    response_body: bool = False,
) -> dict[str, Any]:
    """The entry for ``ctx`` once its log phase ran (any time after it: nothing read here
    changes after the response); ``start_time`` is :attr:`Logged.start_time`."""
    request = ctx.request
    route = ctx.route
    args, query = redaction.query(request.query)
    uri = request.path + ("?" + query if query else "")
    host = request.header("host") or ctx.host
    latency = ctx.latency
    request_entry: dict[str, Any] = {
        "method": request.method,
        "uri": uri,
        "url": f"{request.scheme}://{host}{uri}",
        "headers": redaction.header_map(request.headers),
        "querystring": args,
        "size": ctx.request_bytes,
    }
    if request_body:
        body = ctx.vars.get(_REQUEST_BODY)
        if body is not None:
            request_entry["body"] = _text(body)
    found = ctx._vars
    headers: ResponseHeaders | RelayedHead | None = (
        found.get(_RESPONSE_HEADERS) if found is not None else None
    )
    if headers is None:  # relayed as it came: the head kept for observers, taken apart here
        headers = ctx.response_head
    response_entry: dict[str, Any] = {
        "status": ctx.status,
        "headers": redaction.header_map(headers.items()) if headers is not None else {},
        "size": ctx.response_bytes,
    }
    if response_body:
        body = ctx.vars.get(_RESPONSE_BODY)
        if body is not None:
            response_entry["body"] = _text(body)
    upstream = ctx.upstream_seconds
    entry: dict[str, Any] = {
        "request": request_entry,
        "response": response_entry,
        "upstream": ctx.upstream_addr,
        "latency": _millis(latency),
        "upstream_latency": None if upstream is None else _millis(upstream),
        "client_ip": ctx.client_ip,
        "start_time": start_time,
        "request_id": ctx.request_id,
        "route_id": route.id,
        "route_name": route.name,
        "api_id": route.api_id,
        "api_name": route.api_name,
        "environment_id": env_id,
        "server": {"hostname": node_id, "version": __version__},
    }
    if ctx.consumer is not None:
        entry["consumer"] = {"username": ctx.consumer.username}
    exposed = found.get(EXPOSED) if found is not None else None
    if exposed:  # (product-quota's ctx_namespace: under names that hide none of the above)
        for key, value in exposed.items():
            entry.setdefault(key, value)
    return entry


# ---------------------------------------------------------------------- deferred entries


class Logged:
    """A request whose log phase ran, waiting in a logger's batch for its entry to be built
    (:func:`full_log`, by the batch's sender, off the request's path). What the request must
    stamp itself is taken now: the wall clock it started at (epoch milliseconds)."""

    __slots__ = ("ctx", "now", "start_time")

    def __init__(self, ctx: RequestContext, now: float) -> None:
        self.ctx = ctx
        self.now = now  # the wall clock when it was logged, in seconds
        self.start_time = int((now - (_clock() - ctx.started)) * 1000)


def retained_bytes(logged: Logged) -> int:
    """Roughly what ``logged`` keeps in memory while it waits (the batch's bound)."""
    found = logged.ctx._vars
    if found is None:
        return _RETAINED_ESTIMATE
    size = _RETAINED_ESTIMATE
    for name in (_REQUEST_BODY, _RESPONSE_BODY):
        body = found.get(name)
        if body is not None:
            size += len(body)
    return size


# ---------------------------------------------------------------------- the phases


@mypyc_attr(allow_interpreted_subclasses=True)
class LogPhases(BasePluginRuntime):
    """The per-request phases every logger shares (``_log_sink.LoggerRuntime`` adds its
    construction): they run for every request, so they are compiled with the data plane.
    The access and header phases capture what the entry needs (the bodies only if the logger
    logs them), the log phase queues the request in memory (``batch``, never waiting)."""

    def __init__(
        self,
        batch: BatchProcessor[Logged],
        now: Callable[[], float],
        request_body: bool,
        response_body: bool,
    ) -> None:
        self.batch = batch
        self.now = now
        self.request_body = request_body
        self.response_body = response_body

    def access(self, ctx: RequestContext) -> Access:
        # a plain method: an ``async def`` would make every request wait on a coroutine
        # (Gateway.handle's slower path) for nothing when no body is logged
        if self.request_body:
            return capture_request_body(ctx)
        return None

    def header_filter(self, ctx: RequestContext, status: int, headers: ResponseHeaders) -> None:
        capture_response(ctx, headers, self.response_body)

    def observes_response(self) -> bool:
        # without the body, the headers are all it keeps, and the entry can take them from
        # ``ctx.response_head``: the answer stays on the plain relay
        return not self.response_body

    def log(self, ctx: RequestContext) -> None:
        self.batch.push(Logged(ctx, self.now()))
