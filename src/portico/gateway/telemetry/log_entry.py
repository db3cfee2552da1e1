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

from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any, Final
from urllib.parse import parse_qsl, unquote_plus

import orjson
from mypy_extensions import mypyc_attr

from portico import __version__
from portico.gateway.context import (
    EXPOSED,
    Access,
    BasePluginRuntime,
    RequestContext,
    ResponseHeaders,
)
from portico.gateway.http.errors import ClientError
from portico.gateway.http.names import HEADER_NAMES
from portico.gateway.snapshot import SnapshotConsumer, SnapshotRoute
from portico.gateway.telemetry import jsonline
from portico.gateway.telemetry.batch import Batcher

#: (Final aliases: see CONVENTIONS.md "Compiled modules")
_render: Final = jsonline.render
_quote: Final = encode_basestring
#: where the batch writes the request's headers, and the answer's, in an entry
_REQUEST_HEADERS_HERE: Final = jsonline.REQUEST_HEADERS
_RESPONSE_HEADERS_HERE: Final = jsonline.RESPONSE_HEADERS
EntryBatch = jsonline.EntryBatch

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

    __slots__ = ("args", "headers", "route_id", "secret_headers", "wire_names")

    def __init__(self, route_id: str | None, headers: frozenset[str], args: frozenset[str]) -> None:
        self.route_id = route_id
        self.headers = headers
        self.args = args
        #: header name → whether it is secret: the same few names come with every request,
        #: and the substring scan of ``_secret_name`` was a third of an entry's cost
        self.secret_headers: dict[str, bool] = {}
        #: a node's header name as it came on the wire → (its lower-cased name, whether it
        #: is secret): one lookup per relayed header instead of two (``jsonline``'s table)
        self.wire_names = jsonline.WireNames(_MAX_KNOWN_NAMES)

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

    def secret(self, name: str) -> bool:
        """Whether header ``name`` (lower-cased) is a credential."""
        verdicts = self.secret_headers
        found = verdicts.get(name)
        if found is not None:
            return found
        verdict = _secret_name(name, self.headers)
        if len(verdicts) < _MAX_KNOWN_NAMES:  # names are the client's: bounded
            verdicts[name] = verdict
        return verdict

    def wire_name(self, raw: bytes) -> tuple[str, bool]:
        """A node's header name as it came: lower-cased, and whether it is secret (remembered
        by ``wire_names``, which asks)."""
        name = HEADER_NAMES.get(raw)
        if name is None:
            name = raw.decode("latin-1").lower()
        return (name, self.secret(name))

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

#: routes and consumers whose fixed parts an encoder remembers (a snapshot has this many,
#: rarely more)
_MAX_KNOWN: Final = 4096


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


#: what an entry is made of: these pieces of JSON with the request's values between them
#: (``jsonline.render``), then the route's fields and the consumer's (``RouteLog.pieces``)
_PIECES: Final = (
    b'{"request":{"method":',
    b',"uri":',
    b',"url":',
    b',"headers":',
    b',"querystring":',
    b',"size":',
    b"",  # the request body's field, when logged
    b'},"response":{"status":',
    b',"headers":',
    b',"size":',
    b"",  # the response body's field, when logged
    b'},"upstream":',
    b',"latency":',
    b',"upstream_latency":',
    b',"client_ip":',
    b',"start_time":',
    b',"request_id":',
)
_NOTHING: Final = b""
_EMPTY_OBJECT: Final = b"{}"
#: the keys an entry has of its own: what plugins expose (``EXPOSED``, product-quota's
#: ``ctx_namespace``) never hides one
ENTRY_KEYS: Final = frozenset(
    {
        "request",
        "response",
        "upstream",
        "latency",
        "upstream_latency",
        "client_ip",
        "start_time",
        "request_id",
        "route_id",
        "route_name",
        "api_id",
        "api_name",
        "environment_id",
        "server",
        "consumer",
    }
)


def _exposed_fields(exposed: dict[str, Any]) -> bytes:
    """What plugins exposed to log entries (product-quota's ``ctx_namespace``), as the
    entry's last fields: under names that hide none of the entry's own."""
    return b"".join(
        b"," + orjson.dumps(key) + b":" + orjson.dumps(value, default=str)
        for key, value in exposed.items()
        if key not in ENTRY_KEYS
    )


def _body_field(data: bytes | bytearray) -> bytes:
    return _render((b',"body":', b""), (_text(data),))


def _escaped(piece: bytes) -> bytes:
    """``piece`` (UTF-8) escaped as the content of a JSON string, as ``jsonline`` escapes."""
    return _quote(piece.decode())[1:-1].encode()


class RouteLog:
    """What an entry says of its route, read once per route (its fields are attributes of a
    pydantic model, a generic attribute read each): the redaction rules, and the pieces of
    JSON an entry is written with, the route's fields among them (``escaped``: escaped as
    the content of a JSON string, for a batch whose entries are JSON strings)."""

    __slots__ = ("pieces", "redaction", "route")

    def __init__(self, route: SnapshotRoute, env_id: str, node_id: str, escaped: bool) -> None:
        self.route = route  # kept so that ``id(route)`` cannot be reused while cached
        self.redaction = Redaction.for_route(route)
        fields = {
            "route_id": route.id,
            "route_name": route.name,
            "api_id": route.api_id,
            "api_name": route.api_name,
            "environment_id": env_id,
            "server": {"hostname": node_id, "version": __version__},
        }
        route_fields = b"," + orjson.dumps(fields)[1:-1]
        # the consumer's field (and what plugins expose) between the last two
        pieces = (*_PIECES, route_fields, b"}")
        self.pieces = tuple(_escaped(piece) for piece in pieces) if escaped else pieces


class EntryEncoder:
    """Writes a request's entry (the module docstring's format) as one compact JSON text,
    with ``jsonline`` (C, when the gateway's build is current): the request's values between
    ready-made pieces of JSON, the headers straight from the request's pairs and the node's
    wire lines. What is read of the route and the consumer (pydantic models) is read once and
    remembered by identity. One encoder per logger runtime: it keeps nothing of a snapshot
    but the routes and consumers it met."""

    def __init__(
        self,
        env_id: str,
        node_id: str,
        request_body: bool,
        response_body: bool,
        escaped: bool = False,
    ):
        self.env_id = env_id
        #: entries written as JSON strings (``jsonline.EntryBatch``'s ``escaped``)
        self.escaped = escaped
        self.node_id = node_id
        self.request_body = request_body
        self.response_body = response_body
        self._routes: dict[int, RouteLog] = {}
        self._consumers: dict[int, tuple[SnapshotConsumer, bytes]] = {}
        self._last: RouteLog | None = None  # a runtime usually serves one route

    def route_log(self, route: SnapshotRoute) -> RouteLog:
        last = self._last
        if last is not None and last.route is route:
            return last
        known = self._routes.get(id(route))
        if known is not None:
            self._last = known
            return known
        if len(self._routes) >= _MAX_KNOWN:
            self._routes.clear()
        made = self._routes[id(route)] = RouteLog(route, self.env_id, self.node_id, self.escaped)
        self._last = made
        return made

    def consumer_field(self, consumer: SnapshotConsumer | None) -> bytes:
        if consumer is None:
            return _NOTHING
        known = self._consumers.get(id(consumer))
        if known is not None:
            return known[1]
        if len(self._consumers) >= _MAX_KNOWN:
            self._consumers.clear()
        field = b',"consumer":' + orjson.dumps({"username": consumer.username})
        self._consumers[id(consumer)] = (consumer, field)
        return field

    def write(self, batch: EntryBatch, ctx: RequestContext, start_time: int, now: float) -> int:
        """Write the entry of ``ctx`` once its log phase ran (``start_time``: epoch
        milliseconds) into ``batch``, as compact JSON (UTF-8, nothing escaped but what JSON
        requires), logged at ``now``; the bytes it took. The headers are written by the
        batch itself, straight from the request's pairs and the node's wire lines."""
        route = self.route_log(ctx.route)
        redaction = route.redaction
        request = ctx.request
        query = request.query
        if query:
            args, query = redaction.query(query)
            uri = request.path + "?" + query
            querystring = orjson.dumps(args)
        else:
            uri = request.path
            querystring = _EMPTY_OBJECT
        host = request.host or ctx.host
        request_body = _NOTHING
        if self.request_body:
            body = ctx.vars.get(_REQUEST_BODY)
            if body is not None:
                request_body = _body_field(body)
        found = ctx._vars
        headers: ResponseHeaders | None = (
            found.get(_RESPONSE_HEADERS) if found is not None else None
        )
        answer: list[tuple[str, str]] | None = None
        lines: list[bytes] | None = None
        added: list[tuple[str, str]] | None = None
        tag: tuple[str, str] | None = None
        if headers is not None:
            answer = headers.items()
        else:  # relayed as it came: the head kept for observers, taken apart by the batch
            lines = ctx.relayed_lines
            if lines is not None:
                added, tag = ctx.relayed_added, ctx.relayed_tag
        response_body = _NOTHING
        if self.response_body:
            kept = ctx.vars.get(_RESPONSE_BODY)
            if kept is not None:
                response_body = _body_field(kept)
        upstream = ctx.upstream_seconds
        return batch.add(
            route.pieces,
            now,
            redaction.secret_headers,
            redaction,
            request.headers,
            answer,
            lines,
            redaction.wire_names,
            added,
            tag,
            request.method,
            uri,
            (request.scheme, "://", host, uri),  # the URL: one string of these
            _REQUEST_HEADERS_HERE,
            querystring,
            ctx.request_bytes,
            request_body,
            ctx.status,
            _RESPONSE_HEADERS_HERE,
            ctx.response_bytes,
            response_body,
            ctx.upstream_addr,
            _millis(ctx.latency),
            None if upstream is None else _millis(upstream),
            ctx.client_ip,
            start_time,
            ctx.request_id,
            self.last_fields(ctx, found),
        )

    def last_fields(self, ctx: RequestContext, found: dict[str, Any] | None) -> bytes:
        """The consumer's field, and what plugins exposed to the entry, if any."""
        consumer = self.consumer_field(ctx.consumer)
        exposed = found.get(EXPOSED) if found is not None else None
        if not exposed:
            return consumer
        return consumer + _exposed_fields(exposed)


# ---------------------------------------------------------------------- the phases


@mypyc_attr(allow_interpreted_subclasses=True)
class LogPhases(BasePluginRuntime):
    """The per-request phases every logger shares (``_log_sink.LoggerRuntime`` adds its
    construction): they run for every request, so they are compiled with the data plane.
    The access and header phases capture what the entry needs (the bodies only if the logger
    logs them); the log phase writes the entry (:class:`EntryEncoder`) and queues it in memory
    (``batch``, never waiting). The entry is written there, as APISIX's loggers write theirs
    in the log phase, rather than by the batch's sender: what waits in a batch is then its
    text in the batch's buffer (``jsonline.EntryBatch``), not the request's context and
    everything it holds (the collector scans and moves every object a waiting batch
    keeps), nor an object per entry."""

    def __init__(
        self,
        batch: Batcher[EntryBatch],
        encoder: EntryEncoder,
        now: Callable[[], float],
    ) -> None:
        self.batch = batch
        self.encoder = encoder
        self.now = now
        self.request_body = encoder.request_body
        self.response_body = encoder.response_body

    def access(self, ctx: RequestContext) -> Access:
        # a plain method: an ``async def`` would make every request wait on a coroutine
        # (Gateway.handle's slower path) for nothing when no body is logged
        if self.request_body:
            return capture_request_body(ctx)
        return None

    def runs_access(self) -> bool:
        # without the request body, a route whose other plugins need no access phase either
        # skips it (``context.access_free``)
        return self.request_body

    def header_filter(self, ctx: RequestContext, status: int, headers: ResponseHeaders) -> None:
        capture_response(ctx, headers, self.response_body)

    def observes_response(self) -> bool:
        # without the body, the headers are all it keeps, and the entry can take them from
        # ``ctx.response_head``: the answer stays on the plain relay
        return not self.response_body

    def log(self, ctx: RequestContext) -> None:
        processor = self.batch
        batch = processor.accepting()
        if batch is None:  # dropped (and counted)
            return
        now = self.now()
        # (the request finished a moment ago: its end stands for the time now, one clock
        # read fewer)
        finished = ctx.finished
        start_time = int((now - (finished - ctx.started)) * 1000)
        processor.added(self.encoder.write(batch, ctx, start_time, now), finished)
