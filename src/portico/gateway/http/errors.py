"""Errors the HTTP engine raises towards handlers, and the JSON error bodies it sends.

Exception trees::

    ClientError                 the client side of a request failed; ``status`` is what to answer
    ├── BadRequest (400)        malformed framing (bad chunk size, …) found while reading the body
    ├── RequestTimeout (408)    the body stalled longer than ``Limits.body_timeout``
    ├── PayloadTooLarge (413)   the body passed ``Limits.max_body_bytes``
    └── ClientDisconnected(499) the connection went away; nothing can be answered

    UpstreamError               the upstream client (``upstream.UpstreamPool``) failed
    ├── ConnectFailed           refused, unreachable, TLS handshake failed: nothing was sent,
    │   │                       another node may be tried (502)
    │   └── ConnectTimeout      … because the connect timeout passed (504)
    ├── UpstreamTimeout         send or read timeout (504)
    └── UpstreamReset           reset, closed mid-exchange (502)
        └── InvalidResponse     an answer llhttp refuses, or a head too big (502)

    AnswerReplaced              a body transform found the node's body unusable before it
                                released any of it: the client gets the answer it carries

Handlers see client errors when they read ``Request.body`` or write through a ``Responder``;
the server answers them itself (as ``{"error_msg": ...}``) when a handler lets one escape
before responding.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import ClassVar, Final


class ClientError(Exception):
    """The client side of the exchange failed; ``status`` is the answer it deserves."""

    status: ClassVar[int] = 400


class BadRequest(ClientError):
    status: ClassVar[int] = 400


class RequestTimeout(ClientError):
    status: ClassVar[int] = 408


class PayloadTooLarge(ClientError):
    status: ClassVar[int] = 413


class ClientDisconnected(ClientError):
    # nginx's convention for "client closed the request"; never sent on the wire.
    status: ClassVar[int] = 499


class UpstreamError(Exception):
    """Base of the upstream client's errors."""


class ConnectFailed(UpstreamError):
    """Nothing was sent: the proxy may try another node."""


class ConnectTimeout(ConnectFailed):
    """The connect timeout passed (answered with 504, not 502)."""


class UpstreamTimeout(UpstreamError):
    """The send or read timeout passed → 504."""


class UpstreamReset(UpstreamError):
    """Closed or reset mid-exchange, or an invalid response → 502."""


class InvalidResponse(UpstreamReset):
    """An answer that is not HTTP as llhttp reads it (a malformed status line or header, a
    smuggling shape), or whose head is too big → 502."""


class StaleConnection(UpstreamReset):
    """A reused keep-alive connection failed before any byte of the response: the node most
    likely closed it while idle, so the request can be replayed on a fresh connection."""


class AnswerReplaced(Exception):
    """Raised by a body transform (a plugin's body filter) before it released any byte of
    the answer: the client gets this answer instead of the node's (xml-to-json finding the
    node's XML malformed, or a SOAP fault). The head was held back (``Responder``), so it is
    replaced whole; the node's own status stays the request's result for the health checks:
    the node answered. ``reason`` is what the log records."""

    def __init__(
        self, status: int, headers: list[tuple[str, str]], body: bytes, reason: str
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.headers = headers
        self.body = body
        self.reason = reason


_REASONS: Final[dict[int, str]] = {s.value: s.phrase for s in HTTPStatus}
_REASONS[413] = "Request Entity Too Large"  # nginx's wording, which clients of gateways expect
_REASONS[499] = "Client Closed Request"


def reason(status: int) -> str:
    return _REASONS.get(status, "Unknown")


_BODIES: Final[dict[int, bytes]] = {}


def error_body(status: int, message: str | None = None) -> bytes:
    """``{"error_msg":"404 Route Not Found"}``-style JSON body (APISIX's shape).

    Without a message the body says ``"<status> <reason>"``; the common ones are cached.
    """
    if message is None:
        body = _BODIES.get(status)
        if body is None:
            body = _BODIES[status] = _encode(f"{status} {reason(status)}")
        return body
    return _encode(message)


def _encode(message: str) -> bytes:
    return json.dumps({"error_msg": message}, separators=(",", ":")).encode()


_RAW: Final[dict[tuple[int, str | None], bytes]] = {}


def raw_error_response(status: int, message: str | None = None) -> bytes:
    """A complete ``Connection: close`` error response, for answers sent outside any handler."""
    key = (status, message)
    data = _RAW.get(key)
    if data is None:
        body = error_body(status, message)
        data = (
            f"HTTP/1.1 {status} {reason(status)}\r\n"
            "content-type: application/json\r\n"
            f"content-length: {len(body)}\r\n"
            "connection: close\r\n\r\n"
        ).encode("latin-1") + body
        if len(_RAW) < 256:
            _RAW[key] = data
    return data
