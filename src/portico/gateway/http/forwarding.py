"""What both forwarding paths decide the same way: how each failure is answered, what the
upstream receives as the request head, and the arguments a forwarded request carries.

The proxy forwards a request in a coroutine (``proxy.forward``) or, for a request without a
body on an idle pooled connection, from the connection's callbacks (``callback_forward``):
both read this module, so that a failure or a header cannot be handled one way on one path
and another way on the other.

Failures (``FailureKind``; ``ANSWERS`` holds the row of each):

=====================  ======  ===========  ================================================
kind                   status  blame        when
=====================  ======  ===========  ================================================
CONNECT_FAILED         502     connect      refused, unreachable, TLS handshake failed
CONNECT_TIMEOUT        504     timeout      the connect timeout passed
UPSTREAM_TIMEOUT       504     timeout      the send or read timeout passed
UPSTREAM_RESET         502     reset        closed or reset before or during the answer
INVALID_RESPONSE       502     reset        an answer llhttp refuses, or a head too big
UNEXPECTED_UPGRADE     502     reset        a 101 the client did not ask for
NO_NODE                503     no_node      the balancer has no node to try
NO_UPSTREAM            502     no_upstream  the route targets no upstream
BAD_REQUEST            400     client       the client's body is malformed
REQUEST_TIMEOUT        408     client       the client's body stalled
PAYLOAD_TOO_LARGE      413     client       the client's body passed the limit
CLIENT_GONE            499     client       the client went away (nothing is answered)
=====================  ======  ===========  ================================================

A failure before the answer's first byte is answered with the row's status (its JSON
``error_msg`` body); after it, the client connection is cut so that the client sees a
truncated answer. The blame is ``ProxyResult.error_kind``, which the passive health checks
and the balancer read.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterable, Callable, Container
from typing import Final

from .errors import (
    ClientDisconnected,
    ClientError,
    ConnectFailed,
    ConnectTimeout,
    InvalidResponse,
    PayloadTooLarge,
    RequestTimeout,
    UpstreamError,
    UpstreamTimeout,
)
from .names import HOP_BY_HOP, connection_tokens
from .request import Request
from .responder import Responder
from .upstream import Timeouts, UpstreamResponse

__all__ = [
    "ANSWERS",
    "BodyTransform",
    "FailureAnswer",
    "FailureKind",
    "Forwarding",
    "LineRelay",
    "OnResponse",
    "ProxyResult",
    "answer_failure",
    "describe",
    "failure_of",
    "framing",
    "render_head",
    "request_head",
    "upstream_failure",
    "upstream_target",
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


class LineRelay:
    """What the answer's head goes through when the usual answer need not be taken apart: its
    head is relayed as the node wrote it, with what ``lines_after`` gives
    (``_start_response``); the answers whose head must be taken apart go through
    ``filtered``. Both are told the forwarding's ``subject`` (the request the answer is for),
    so that one relay serves every request. (A base class: see CONVENTIONS.md "Compiled
    modules".)"""

    __slots__ = ()

    def filtered(
        self, subject: object, response: UpstreamResponse, headers: list[tuple[str, str]]
    ) -> tuple[list[tuple[str, str]], BodyTransform | None]:
        """The headers to send and the body's transform, as an ``OnResponse`` gives them."""
        raise NotImplementedError

    def lines_after(
        self, subject: object, response: UpstreamResponse, tag: tuple[str, str] | None
    ) -> list[bytes] | None:
        """The lines to relay for the head (the pieces to join: see ``Connection.lines``),
        the responder's ``tag`` not among them; None: call ``filtered`` instead."""
        raise NotImplementedError


class FailureKind(enum.Enum):
    """Why a forwarded request got no answer of its node (see the module docstring)."""

    CONNECT_FAILED = "connect failed"
    CONNECT_TIMEOUT = "connect timeout"
    UPSTREAM_TIMEOUT = "upstream timeout"
    UPSTREAM_RESET = "upstream reset"
    INVALID_RESPONSE = "invalid response"
    UNEXPECTED_UPGRADE = "unexpected upgrade"
    NO_NODE = "no node"
    NO_UPSTREAM = "no upstream"
    BAD_REQUEST = "bad request"
    REQUEST_TIMEOUT = "request timeout"
    PAYLOAD_TOO_LARGE = "payload too large"
    CLIENT_GONE = "client gone"


class FailureAnswer:
    """One row of the table: what the client gets, and whose fault it is."""

    __slots__ = ("blame", "message", "status")

    def __init__(self, status: int, blame: str, message: str | None = None) -> None:
        self.status = status  # 499: the client went away, nothing is sent
        #: ``ProxyResult.error_kind``: "connect", "timeout", "reset" (the node's fault),
        #: "client", "no_node", "no_upstream" (not the node's)
        self.blame = blame
        #: the body's ``error_msg`` when it is not the status's own ("502 Bad Gateway")
        self.message = message

    @property
    def answered(self) -> bool:
        return self.status != 499


ANSWERS: Final[dict[FailureKind, FailureAnswer]] = {
    FailureKind.CONNECT_FAILED: FailureAnswer(502, "connect"),
    FailureKind.CONNECT_TIMEOUT: FailureAnswer(504, "timeout"),
    FailureKind.UPSTREAM_TIMEOUT: FailureAnswer(504, "timeout"),
    FailureKind.UPSTREAM_RESET: FailureAnswer(502, "reset"),
    FailureKind.INVALID_RESPONSE: FailureAnswer(502, "reset"),
    FailureKind.UNEXPECTED_UPGRADE: FailureAnswer(502, "reset"),
    FailureKind.NO_NODE: FailureAnswer(503, "no_node"),
    FailureKind.NO_UPSTREAM: FailureAnswer(502, "no_upstream", "502 Bad Gateway: no upstream"),
    FailureKind.BAD_REQUEST: FailureAnswer(400, "client"),
    FailureKind.REQUEST_TIMEOUT: FailureAnswer(408, "client"),
    FailureKind.PAYLOAD_TOO_LARGE: FailureAnswer(413, "client"),
    FailureKind.CLIENT_GONE: FailureAnswer(499, "client"),
}


def failure_of(error: UpstreamError | ClientError) -> FailureKind:
    """The kind of an upstream or client failure."""
    if isinstance(error, UpstreamError):
        return upstream_failure(error)
    if isinstance(error, ClientDisconnected):
        return FailureKind.CLIENT_GONE
    if isinstance(error, RequestTimeout):
        return FailureKind.REQUEST_TIMEOUT
    if isinstance(error, PayloadTooLarge):
        return FailureKind.PAYLOAD_TOO_LARGE
    return FailureKind.BAD_REQUEST  # (BadRequest, or the base's 400)


def upstream_failure(error: UpstreamError) -> FailureKind:
    """The kind of an upstream failure."""
    if isinstance(error, ConnectFailed):
        if isinstance(error, ConnectTimeout):
            return FailureKind.CONNECT_TIMEOUT
        return FailureKind.CONNECT_FAILED
    if isinstance(error, UpstreamTimeout):
        return FailureKind.UPSTREAM_TIMEOUT
    if isinstance(error, InvalidResponse):
        return FailureKind.INVALID_RESPONSE
    return FailureKind.UPSTREAM_RESET  # (a reset, or a request body that lied)


def answer_failure(responder: Responder, kind: FailureKind) -> int:
    """Tell the client of a failure: the row's answer if nothing of another has left yet, a
    cut connection if the head has (only that tells a client the answer is incomplete);
    nothing to a client that went away. The status the client got (0: a cut answer)."""
    row = ANSWERS[kind]
    if not row.answered:
        return row.status
    if responder.committed:
        responder.abort()
        return 0
    if responder.started:
        responder.reset()  # a head held back: it never left
    responder.send_error(row.status, row.message)
    return row.status


def describe(error: BaseException) -> str:
    """What went wrong, for the log (``ProxyResult.error``)."""
    return str(error) or type(error).__name__


class ProxyResult:
    """What became of one forwarded request. (A plain class: a NamedTuple's constructor is
    interpreted code even where this module is compiled; portico/native.py.)"""

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
        #: whose fault a failure was: ``FailureAnswer.blame`` of its kind; None when all went
        #: well
        self.error_kind = error_kind


class Forwarding:
    """How a route forwards one request, whichever path takes it: the target path, the Host
    the node gets, the headers added (the request id first), timeouts, retries, TLS, what
    rewrites the answer, and whether the connection is pooled. (A plain class: one is made
    per request; portico/native.py.)"""

    __slots__ = (
        "extra_headers",
        "host_header",
        "keepalive",
        "on_response",
        "path",
        "retries",
        "server_name",
        "subject",
        "timeouts",
        "tls",
    )

    def __init__(
        self,
        path: str,
        host_header: str,
        extra_headers: list[tuple[str, str]],
        timeouts: Timeouts,
        retries: int = 0,
        tls: bool = False,
        on_response: OnResponse | LineRelay | None = None,
        server_name: str | None = None,
        keepalive: bool = True,
        subject: object = None,
    ) -> None:
        self.path = path  # the upstream's path (the request's query is appended)
        self.host_header = host_header
        #: set on the request, replacing same-named headers of the client's
        self.extra_headers = extra_headers
        self.timeouts = timeouts
        self.retries = retries  # other nodes tried after a connect failure
        self.tls = tls
        self.on_response = on_response
        #: the TLS server name (SNI, certificate check) when the node is an address checked
        #: for a host name (a plugin's pinned destination); None: the node's host
        self.server_name = server_name
        #: False: a new connection, closed after the answer (never taken from the pool, never
        #: put back)
        self.keepalive = keepalive
        #: what ``on_response``, a ``LineRelay``, is told the answer is for (the gateway's
        #: request context): one relay then serves every request of a chain, not one a request
        self.subject = subject


def upstream_target(path: str, query: str) -> str:
    """The request target the node gets: ``path`` with the client's query."""
    return path if not query else f"{path}{'&' if '?' in path else '?'}{query}"


def framing(body: AsyncIterable[bytes] | bytes | None, content_length: int | None) -> str:
    """The framing header line of a request head (none, ``content-length`` or chunked): the
    body's, whole (``bytes``) or streamed (chunked unless ``content_length`` is known)."""
    if body is None:
        # (a bodiless request whose client said so says it on)
        return "content-length: 0\r\n" if content_length == 0 else ""
    if isinstance(body, bytes):
        return f"content-length: {len(body)}\r\n"
    if content_length is None:
        return "transfer-encoding: chunked\r\n"
    return f"content-length: {content_length}\r\n"


def render_head(
    method: str, target: str, headers: list[tuple[str, str]] | str, framing_line: str
) -> bytes:
    """A request head from header pairs, or header lines already rendered (``name:
    value\r\n`` each), without the framing ones (``framing_line``: see ``framing``)."""
    parts = [method, " ", target, " HTTP/1.1\r\n"]
    if isinstance(headers, str):
        parts.append(headers)
    else:
        for name, value in headers:
            parts += (name, ": ", value, "\r\n")
    parts.append(framing_line)
    parts.append("\r\n")
    return "".join(parts).encode("latin-1")


# Also rebuilt for the upstream rather than passed through.
_REQUEST_DROP: Final = HOP_BY_HOP | {
    "host",
    "content-length",
    "expect",
    "x-forwarded-for",
    "x-forwarded-proto",
    "x-forwarded-host",
}


def request_head(request: Request, forwarding: Forwarding, framing_line: str) -> bytes:
    """The head the node receives, from the request line to the empty line, rendered in one
    pass over the client's headers (one string built): these without the hop-by-hop ones
    (Connection and the headers it names, Keep-Alive, Proxy-Connection, TE, Trailer,
    Transfer-Encoding, Upgrade unless upgrading, Proxy-Authorization) and without Expect
    (100-continue is answered by the gateway); ``Host: host_header``; ``X-Forwarded-For``
    with the client's address appended, ``X-Forwarded-Proto`` and ``X-Forwarded-Host`` set;
    ``Connection: close`` when the connection is not kept; ``extra_headers`` replacing
    same-named ones; ``framing_line`` (see ``framing``)."""
    extra_headers = forwarding.extra_headers
    # lower-cased once: the names the client's are compared with, and the ones sent (a list:
    # the usual one or two, X-Request-Id and a plugin's, are found sooner than in a set)
    names = [name.lower() for name, _ in extra_headers]
    replaced: Container[str] = names if len(names) <= 4 else set(names)
    tokens = connection_tokens(request.connection) if request.connection else None
    target = upstream_target(forwarding.path, request.query)
    parts = [request.method, " ", target, " HTTP/1.1\r\nhost: ", forwarding.host_header, "\r\n"]
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
            parts.append(name)  # (appends: see CONVENTIONS.md "Compiled modules")
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
    elif not forwarding.keepalive:
        parts.append("connection: close\r\n")  # (the node may close first: nothing waits)
    for i in range(len(names)):
        parts.append(names[i])
        parts.append(": ")
        parts.append(extra_headers[i][1])
        parts.append("\r\n")
    if framing_line:  # (none for most: one piece fewer to join)
        parts.append(framing_line)
    parts.append("\r\n")
    return "".join(parts).encode("latin-1")
