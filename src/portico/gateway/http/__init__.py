"""The gateway's HTTP engine: a raw asyncio/httptools HTTP/1.1 server (``server``), a pooled
upstream client (``upstream``) and the reverse-proxy step between them (``proxy``).

Everything here is on the data plane's hot path: no framework, no logging per request.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from .body import RequestBody
from .errors import (
    BadRequest,
    ClientDisconnected,
    ClientError,
    PayloadTooLarge,
    RequestTimeout,
    error_body,
)
from .proxy import (
    BodyTransform,
    Forwarding,
    OnResponse,
    ProxyResult,
    Target,
    forward,
    forward_now,
)
from .responder import TAKEN, Taken
from .server import Handler, Limits, Request, Responder, serve, shutdown
from .upstream import (
    ConnectFailed,
    ConnectTimeout,
    Timeouts,
    UpstreamError,
    UpstreamPool,
    UpstreamReset,
    UpstreamResponse,
    UpstreamTimeout,
)

__all__ = [
    "TAKEN",
    "BadRequest",
    "BodyTransform",
    "ClientDisconnected",
    "ClientError",
    "ConnectFailed",
    "ConnectTimeout",
    "Forwarding",
    "Handler",
    "Limits",
    "OnResponse",
    "PayloadTooLarge",
    "ProxyResult",
    "Request",
    "RequestBody",
    "RequestTimeout",
    "Responder",
    "Taken",
    "Target",
    "Timeouts",
    "UpstreamError",
    "UpstreamPool",
    "UpstreamReset",
    "UpstreamResponse",
    "UpstreamTimeout",
    "error_body",
    "forward",
    "forward_now",
    "serve",
    "shutdown",
]
