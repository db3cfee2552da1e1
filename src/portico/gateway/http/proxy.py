"""Forwarding one request to an upstream node and relaying the answer.

What the upstream receives: the client's headers without the hop-by-hop ones (Connection and
the headers it names, Keep-Alive, Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade
unless upgrading, Proxy-Authorization) and without Expect (100-continue is answered here);
``Host: host_header``; ``X-Forwarded-For`` with the client's address appended,
``X-Forwarded-Proto`` and ``X-Forwarded-Host`` set; ``extra_headers`` replacing same-named
ones. The body is streamed, re-framed by the pool. The answer goes back the same way, hop-by-hop
headers removed, body streamed with back-pressure on both sides.

Failures: connect failures are retried on the next target (``retries`` times); nothing else is
retried (a request may have reached the node). Connect/send/read timeouts → 504; refused,
reset, invalid answer → 502; no node at all → 503. A failure after the response has started
closes the client connection so the client sees a truncated response.

If the client goes away while the node has not answered yet, the exchange is abandoned (the
upstream connection is dropped, nginx's ``proxy_ignore_client_abort off``) and the result is 499.

``forward`` is a coroutine. ``forward_now`` is the same exchange for a request without a body on
an idle pooled connection, driven by the connections' callbacks instead of a task (resuming a
coroutine for each step cost more than the rest of a small request); a response that streams,
upgrades or fails on a stale connection continues in a coroutine.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Callable, Container, Coroutine
from typing import Any, Final, NamedTuple, Protocol

from .errors import ClientDisconnected, ClientError, StaleConnection
from .names import HOP_BY_HOP, connection_tokens
from .responder import Responder
from .server import Request
from .tunnel import relay
from .upstream import (
    ConnectFailed,
    ConnectTimeout,
    Timeouts,
    UpstreamError,
    UpstreamPool,
    UpstreamResponse,
    UpstreamTimeout,
    response_of,
)
from .upstream_conn import Connection, Listener, name_size_bit

__all__ = [
    "BodyTransform",
    "Endpoint",
    "OnResponse",
    "ProxyResult",
    "Target",
    "forward",
    "forward_now",
    "request_head",
    "response_headers",
]

#: ``(chunk, last) → bytes to send``: may hold data back and release it when ``last`` is true
BodyTransform = Callable[[bytes, bool], bytes]
#: called with the upstream's answer and its headers (hop-by-hop removed) before anything is
#: sent; returns the headers to send and, when the body is to be rewritten, a transform; it
#: may set ``response.status`` to change the status sent (the result keeps the node's)
OnResponse = Callable[
    [UpstreamResponse, list[tuple[str, str]]],
    tuple[list[tuple[str, str]], BodyTransform | None],
]


#: names plugins set on answers, checked and lower-cased once (a bounded memo: the names
#: come from plugin code and configuration, a handful)
_ADDED_NAMES: Final[dict[str, str]] = {}
_MAX_ADDED_NAMES: Final = 256


def with_added(
    headers: list[tuple[str, str]], pairs: list[tuple[str, str]], *, lower_case: bool = True
) -> list[tuple[str, str]]:
    """``headers`` with ``pairs`` (names lower-cased) set: those of the same names taken out,
    the pairs after the rest (``lower_case``: ``headers`` names are lower-cased already)."""
    replaced = {name for name, _ in pairs}
    if lower_case:
        kept = [h for h in headers if h[0] not in replaced]
    else:
        kept = [h for h in headers if h[0].lower() not in replaced]
    kept.extend(pairs)
    return kept


def node_address(host: str, port: int) -> str:
    """``host:port`` (IPv6 in brackets), as nginx's ``$upstream_addr`` writes it."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class AddedHeaders:
    """An ``OnResponse`` that only sets headers on the answer (``pairs``: names lower-cased),
    replacing the node's of the same names: the usual answer gets them as extra lines after
    the node's, which are relayed as they came (``_start_response``)."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    @staticmethod
    def of(headers: dict[str, str]) -> AddedHeaders | None:
        """For ``headers`` that can be written as they are (no line break in a name or value,
        the check ``Responder.start`` makes), else None (the general path refuses them)."""
        pairs: list[tuple[str, str]] = []
        for name, value in headers.items():
            key = _ADDED_NAMES.get(name)
            if key is None:
                if "\r" in name or "\n" in name:
                    return None
                key = name.lower()
                if len(_ADDED_NAMES) < _MAX_ADDED_NAMES:
                    _ADDED_NAMES[name] = key
            if "\r" in value or "\n" in value:
                return None
            pairs.append((key, value))
        return AddedHeaders(pairs)

    def __call__(
        self, response: UpstreamResponse, headers: list[tuple[str, str]]
    ) -> tuple[list[tuple[str, str]], BodyTransform | None]:
        return with_added(headers, self.pairs), None

    def lines_after(
        self, response: UpstreamResponse, tag: tuple[str, str] | None
    ) -> list[bytes] | None:
        """The node's lines and then the headers set, as lines (the pieces to join for the
        head: see ``Connection.lines``); None when the node sent one of them (it must be taken
        out: the caller takes the headers apart) or one is the responder's ``tag``."""
        lines = response.lines
        sizes = response.name_sizes
        head = b""
        out = lines.copy()
        for name, value in self.pairs:
            if tag is not None and name == tag[0]:
                return None
            if sizes & name_size_bit(len(name)):
                # a node's header has a name this long: is it this one? (one lower-cased copy
                # of the head, where each name follows a "\n")
                if not head:
                    head = b"\n" + b"".join(lines).lower()
                if head.find(f"\n{name}:".encode("latin-1")) >= 0:
                    return None
            out.append(f"{name}: {value}\r\n".encode("latin-1"))
        return out


# Also rebuilt for the upstream rather than passed through.
_REQUEST_DROP: Final = HOP_BY_HOP | {
    "host",
    "content-length",
    "expect",
    "x-forwarded-for",
    "x-forwarded-proto",
    "x-forwarded-host",
}


class Endpoint(Protocol):
    """Where one attempt goes: a ``Target``, or the balancer's node itself."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def address(self) -> str:
        """``host:port`` (IPv6 in brackets), as nginx's ``$upstream_addr`` writes it."""
        ...


class Target(NamedTuple):
    host: str
    port: int

    @property
    def address(self) -> str:
        return node_address(self.host, self.port)


class ProxyResult:
    """What became of one forwarded request. (A plain class, not a
    ``NamedTuple``: see CONVENTIONS.md "Compiled modules".)"""

    __slots__ = (
        "error",
        "error_kind",
        "request_bytes",
        "response_bytes",
        "status",
        "upstream_addr",
        "upstream_seconds",
    )

    def __init__(
        self,
        status: int,
        upstream_addr: str | None,
        upstream_seconds: float,
        request_bytes: int,
        response_bytes: int,
        error: str | None,
        error_kind: str | None = None,
    ) -> None:
        self.status = status  # what the client got (499: it went away before the answer)
        #: "host:port" of each node tried, ", "-separated (nginx's form)
        self.upstream_addr = upstream_addr
        self.upstream_seconds = upstream_seconds  # first connect attempt → last byte relayed
        #: request body bytes received from the client (tunnel: client → node)
        self.request_bytes = request_bytes
        #: response body bytes written to the client (tunnel: node → client)
        self.response_bytes = response_bytes
        self.error = error  # what went wrong, for the log ("upstream read timeout", …)
        # Who failed, for passive health checks: "connect" (refused/unreachable/TLS),
        # "timeout" (connect, send or read), "reset" (closed mid-exchange, invalid answer) —
        # the node's fault — or "client" (went away, bad or slow body), "no_node"; None when
        # all went well.
        self.error_kind = error_kind


def request_head(
    request: Request,
    host_header: str,
    extra_headers: list[tuple[str, str]],
    target: str | None = None,
) -> str:
    """The header lines the upstream receives, ``name: value\r\n`` each, rendered in one pass
    over the client's headers (see the module docstring for what is dropped and added);
    ``extra_headers`` replace same-named ones. With ``target``: the whole head of a request
    without a body, from the request line to the empty line (one string built, not two)."""
    if len(extra_headers) == 1:  # the usual case: X-Request-Id alone
        replaced: Container[str] = (extra_headers[0][0].lower(),)
    else:
        replaced = {name.lower() for name, _ in extra_headers}
    tokens = connection_tokens(request.connection) if request.connection else None
    if target is None:
        parts = ["host: ", host_header, "\r\n"]
    else:
        parts = [request.method, " ", target, " HTTP/1.1\r\nhost: ", host_header, "\r\n"]
    forwarded_for: str | None = None
    original_host = ""
    upgrade = ""
    for name, value in request.headers:
        if name in _REQUEST_DROP:
            if name == "x-forwarded-for":
                forwarded_for = value if forwarded_for is None else f"{forwarded_for}, {value}"
            elif name == "host":
                original_host = value
            elif name == "upgrade":
                upgrade = value
        elif name not in replaced and (tokens is None or name not in tokens):
            parts.append(name)  # (appends, not ``+=``: see CONVENTIONS.md "Compiled modules")
            parts.append(": ")
            parts.append(value)
            parts.append("\r\n")
    client_ip = request.client_ip
    parts.append("x-forwarded-for: ")
    parts.append(client_ip if forwarded_for is None else f"{forwarded_for}, {client_ip}")
    parts.append("\r\nx-forwarded-proto: ")
    parts.append(request.scheme)
    parts.append("\r\n")
    if original_host:
        parts += ("x-forwarded-host: ", original_host, "\r\n")
    if request.upgrade:
        parts += ("connection: upgrade\r\nupgrade: ", upgrade, "\r\n")
    for name, value in extra_headers:
        parts.append(name.lower())
        parts.append(": ")
        parts.append(value)
        parts.append("\r\n")
    if target is not None:
        if request.content_length == 0:  # (said by the client: said on)
            parts.append("content-length: 0\r\n")
        parts.append("\r\n")
    return "".join(parts)


def response_headers(response: UpstreamResponse) -> list[tuple[str, str]]:
    """The upstream's headers as the client gets them: the hop-by-hop ones were left out as
    they were parsed (framing is redone per client); here also those its Connection names."""
    tokens = connection_tokens(response.connection)
    if tokens:
        return [h for h in response.headers if h[0] not in tokens]
    return response.headers


async def forward(
    request: Request,
    responder: Responder,
    *,
    pool: UpstreamPool,
    targets: Callable[[], Endpoint | None],
    path: str,
    host_header: str,
    extra_headers: list[tuple[str, str]],
    timeouts: Timeouts,
    retries: int,
    tls: bool = False,
    on_response: OnResponse | None = None,
) -> ProxyResult:
    loop = responder.loop
    started = loop.time()
    target = _target(path, request.query)
    headers = request_head(request, host_header, extra_headers)
    body: AsyncIterable[bytes] | bytes | None
    content_length = request.content_length
    if content_length is None and not request.body.chunked:
        body = None
    else:
        body = request.body.take_complete()  # a small body that is already here: one write
        if body is None:
            body = request.body
    tried: list[str] = []
    task = asyncio.current_task(loop)
    assert task is not None
    response: UpstreamResponse | None = None
    status = 0
    error: str | None = None
    kind: str | None = None
    cancelled = False
    attempt = 0
    # While waiting for the node, a client that goes away cancels the wait (see docstring).
    responder.on_disconnect(task.cancel)
    try:
        while True:
            node = targets()
            if node is None:
                if not tried:
                    status, error, kind = 503, "no upstream node available", "no_node"
                break
            tried.append(node.address)
            try:
                response = await pool.request(
                    node.host,
                    node.port,
                    request.method,
                    target,
                    headers,
                    body,
                    content_length,
                    timeouts,
                    tls,
                )
                break
            except ConnectFailed as failed:
                error = str(failed)
                timed_out = isinstance(failed, ConnectTimeout)
                status, kind = (504, "timeout") if timed_out else (502, "connect")
                if attempt < retries:
                    attempt += 1
                    continue  # (no node left: the last failure stands)
                break
    except asyncio.CancelledError:
        if not responder.disconnected:
            raise
        cancelled = True
        task.uncancel()
        status, error, kind = 499, "client disconnected", "client"
    # (one name per clause: see CONVENTIONS.md "Compiled modules")
    except UpstreamTimeout as timeout:
        status, error, kind = 504, str(timeout), "timeout"
    except UpstreamError as upstream_error:
        status, error, kind = 502, str(upstream_error), "reset"
    except ClientError as client_error:
        status = client_error.status
        error, kind = str(client_error) or type(client_error).__name__, "client"
    finally:
        responder.on_disconnect(None)
    if responder.disconnected and not cancelled:
        # Our cancel was requested but not delivered yet: take it here, not in the caller.
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            task.uncancel()
        if response is not None:
            response.close()
            response = None
        status, error, kind = 499, "client disconnected", "client"

    upstream_addr = ", ".join(tried) if tried else None
    if response is None:
        if status != 499 and not responder.started:
            responder.send_error(status)
        return ProxyResult(
            status, upstream_addr, loop.time() - started, request.body.received, 0, error, kind
        )
    if response.upgraded:
        return await _tunnel(request, responder, response, timeouts, upstream_addr, started)
    return await _relay(responder, response, on_response, upstream_addr, started, request)


def _target(path: str, query: str) -> str:
    return path if not query else f"{path}{'&' if '?' in path else '?'}{query}"


async def _relay(
    responder: Responder,
    response: UpstreamResponse,
    on_response: OnResponse | None,
    upstream_addr: str | None,
    started: float,
    request: Request,
) -> ProxyResult:
    if response.complete is not None:
        return _relay_now(responder, response, on_response, upstream_addr, started, request)
    error: str | None = None
    kind: str | None = None
    status = response.status
    try:
        transform = _start_response(responder, response, on_response)
        await _stream(responder, response.body, transform)
    except BaseException as exc:
        status, error, kind = _relay_failed(exc, responder, response, status)
    return _relayed(responder, request, status, upstream_addr, started, error, kind)


def _relay_now(
    responder: Responder,
    response: UpstreamResponse,
    on_response: OnResponse | None,
    upstream_addr: str | None,
    started: float,
    request: Request,
) -> ProxyResult:
    """``_relay`` for an answer whose whole body came with the head: one write, no wait."""
    error: str | None = None
    kind: str | None = None
    status = response.status
    complete = response.complete or b""
    try:
        transform = _start_response(responder, response, on_response)
        responder.write_last(complete if transform is None else transform(complete, True))
    except BaseException as exc:
        status, error, kind = _relay_failed(exc, responder, response, status)
    return _relayed(responder, request, status, upstream_addr, started, error, kind)


def _relayed(
    responder: Responder,
    request: Request,
    status: int,
    upstream_addr: str | None,
    started: float,
    error: str | None,
    kind: str | None,
) -> ProxyResult:
    """The result of a relayed answer: the bytes are what the responder wrote."""
    return ProxyResult(
        status,
        upstream_addr,
        responder.loop.time() - started,
        request.body.received,
        responder.bytes_written,
        error,
        kind,
    )


def _start_response(
    responder: Responder, response: UpstreamResponse, on_response: OnResponse | None
) -> BodyTransform | None:
    if connection_tokens(response.connection) is None and (
        not response.named_request_id or responder.tag is None
    ):
        # the usual answer: its header lines relayed as they came, never taken apart
        if on_response is None:
            responder.start_lines(response.status, response.lines, response.content_length)
            return None
        if isinstance(on_response, AddedHeaders):
            lines = on_response.lines_after(response, responder.tag)
            if lines is not None:
                responder.start_lines(response.status, lines, response.content_length)
                return None
    if on_response is None:
        responder.start(response.status, response_headers(response), parsed=True)
        return None
    headers, transform = on_response(response, response_headers(response))  # (may add some)
    responder.start(response.status, headers)
    return transform


def _relay_failed(
    exc: BaseException, responder: Responder, response: UpstreamResponse, status: int
) -> tuple[int, str, str]:
    """What a failure while relaying makes of the result: an upstream failure before the first
    body byte becomes a 502/504 answer, after it a cut connection; a client that went away is
    the client's doing. Anything else is raised again (the upstream connection dropped)."""
    if isinstance(exc, UpstreamError):
        kind = "timeout" if isinstance(exc, UpstreamTimeout) else "reset"
        if responder.committed:
            responder.abort()  # the head is out: only a cut connection tells the client
        else:  # failed before the first body byte: the head was still held back
            status = 504 if isinstance(exc, UpstreamTimeout) else 502
            responder.reset()
            responder.send_error(status)
        return status, str(exc), kind
    response.close()
    if isinstance(exc, ClientDisconnected):
        return status, "client disconnected", "client"
    raise exc


async def _stream(
    responder: Responder, body: AsyncIterable[bytes], transform: BodyTransform | None
) -> None:
    write = responder.write
    if transform is None:
        async for chunk in body:
            await write(chunk)
    else:
        async for chunk in body:
            out = transform(chunk, False)
            if out:
                await write(out)
        out = transform(b"", True)
        if out:
            await write(out)
    responder.end()


async def _tunnel(
    request: Request,
    responder: Responder,
    response: UpstreamResponse,
    timeouts: Timeouts,
    upstream_addr: str | None,
    started: float,
) -> ProxyResult:
    loop = asyncio.get_running_loop()
    if not request.upgrade or response.status != 101:
        response.close()
        responder.send_error(502)
        return ProxyResult(
            502,
            upstream_addr,
            loop.time() - started,
            0,
            0,
            "unexpected upgrade from upstream",
            "reset",
        )
    headers = response_headers(response)
    headers.append(("connection", "upgrade"))
    if response.upgrade is not None:
        headers.append(("upgrade", response.upgrade))
    responder.start(101, headers)
    client, client_pending = responder.detach()
    upstream, upstream_pending = response.detach()
    sent, received = await relay(
        client, client_pending, upstream, upstream_pending, idle_timeout=timeouts.read
    )
    return ProxyResult(101, upstream_addr, loop.time() - started, sent, received, None)


class Outcome:
    """Who hears how a request forwarded by ``forward_now`` went (one object rather than two
    callbacks, a base class rather than a ``Protocol``: see CONVENTIONS.md "Compiled
    modules")."""

    __slots__ = ()

    def done(self, result: ProxyResult) -> None:
        """The result (from a callback, or from the coroutine the rest continued in)."""
        raise NotImplementedError

    def again(self) -> Coroutine[Any, Any, None]:
        """The coroutine that forwards the request again (the connection turned out to be
        stale)."""
        raise NotImplementedError


class Exchange(Listener):
    """One request without a body on an idle pooled connection, driven by callbacks (see
    ``forward_now``). ``outcome`` gets the result; the handler is then finished
    (``finish``)."""

    __slots__ = (
        "_conn",
        "_on_response",
        "_outcome",
        "_request",
        "_responder",
        "_timeouts",
        "addr",
        "started",
    )

    def __init__(
        self,
        request: Request,
        responder: Responder,
        conn: Connection,
        addr: str,
        timeouts: Timeouts,
        on_response: OnResponse | None,
        outcome: Outcome,
    ) -> None:
        self._request = request
        self._responder = responder
        self._conn = conn
        self.addr = addr
        self._timeouts = timeouts
        self._on_response = on_response
        self._outcome = outcome
        self.started = responder.loop.time()

    def on_upstream(self) -> None:
        """The connection's news: the head (maybe the whole answer), or a failure."""
        conn = self._conn
        responder = self._responder
        responder.on_disconnect(None)
        if not conn.head_done:
            failure = conn.failure()
            if isinstance(failure, StaleConnection):
                # The node had closed the idle connection: the request goes again, as
                # ``UpstreamPool.request`` replays it (a request without a body may be).
                responder.defer(self._outcome.again())
                return
            timed_out = isinstance(failure, UpstreamTimeout)
            status = 504 if timed_out else 502
            if not responder.started:
                responder.send_error(status)
            self._end(status, str(failure), "timeout" if timed_out else "reset")
            return
        response = response_of(conn, self._timeouts.read)
        if response.complete is None or response.upgraded:
            responder.defer(self._relay_later(response))
            return
        try:
            result = _relay_now(
                responder, response, self._on_response, self.addr, self.started, self._request
            )
        except Exception as exc:
            responder.finish(exc)
            return
        self._conclude(result)

    def client_left(self) -> None:
        """The client went away before the answer: the exchange is abandoned (499)."""
        conn = self._conn
        conn.listener = None
        conn.abort()
        self._end(499, "client disconnected", "client")

    def _end(self, status: int, error: str, kind: str) -> None:
        self._conclude(
            ProxyResult(
                status, self.addr, self._responder.loop.time() - self.started, 0, 0, error, kind
            )
        )

    def _conclude(self, result: ProxyResult) -> None:
        """Hand the result over, then finish the request (failed, if handing it over did)."""
        try:
            self._outcome.done(result)
        except Exception as exc:
            self._responder.finish(exc)
            return
        self._responder.finish()

    async def _relay_later(self, response: UpstreamResponse) -> None:
        if response.upgraded:
            result = await _tunnel(
                self._request, self._responder, response, self._timeouts, self.addr, self.started
            )
        else:
            result = await _relay(
                self._responder,
                response,
                self._on_response,
                self.addr,
                self.started,
                self._request,
            )
        self._outcome.done(result)


def forward_now(
    request: Request,
    responder: Responder,
    conn: Connection,
    *,
    addr: str,
    path: str,
    host_header: str,
    extra_headers: list[tuple[str, str]],
    timeouts: Timeouts,
    on_response: OnResponse | None,
    outcome: Outcome,
) -> None:
    """``forward`` for a request without a body, on ``conn`` (idle, claimed from the pool,
    to the node ``addr``), without a task: the request is written now and the answer handled
    by the connection's callbacks; ``outcome`` hears how it went (see ``Outcome``)."""
    exchange = Exchange(request, responder, conn, addr, timeouts, on_response, outcome)
    head = request_head(request, host_header, extra_headers, _target(path, request.query))
    # (the exchange's start is the read timeout's: one clock reading for both)
    conn.send(request.method, head.encode("latin-1"), exchange.started + timeouts.read, exchange)
    responder.on_disconnect(exchange.client_left)
