"""What a plugin sees of a request, and what it may do to it.

A chain is built once per config snapshot (``gateway.config``); per request only a
``RequestContext`` is allocated. Plugins run in phases:

* ``access`` — before the upstream is chosen, in chain order; a plugin may answer the
  request itself by returning a ``Reply`` (401, 403, 429, a cache hit...), which ends the
  access phase; it may set the consumer, rewrite the upstream path, add upstream headers.
* ``header_filter`` — once the response status and headers are known (from the upstream or a
  plugin's reply), in chain order; it may add or replace response headers.
* ``log`` — after the response was sent; must not block (queue, don't send).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs

if TYPE_CHECKING:
    from portico.gateway.http.server import Request
    from portico.gateway.snapshot import SnapshotConsumer, SnapshotRoute


@dataclass(slots=True)
class Reply:
    """A response produced by the gateway itself (not proxied)."""

    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def error(
        cls, status: int, message: str, headers: list[tuple[str, str]] | None = None
    ) -> Reply:
        """APISIX's shape: ``{"message": "..."}`` for plugin refusals."""
        return cls(
            status,
            json.dumps({"message": message}).encode(),
            [("content-type", "application/json"), *(headers or [])],
        )


@dataclass(slots=True)
class RequestContext:
    request: Request
    route: SnapshotRoute
    params: dict[str, str]
    path: str  # normalised; what the upstream receives unless a plugin rewrites it
    host: str
    client_ip: str
    request_id: str
    consumer: SnapshotConsumer | None = None
    upstream_path: str | None = None
    upstream_headers: dict[str, str] = field(default_factory=dict)
    remove_upstream_headers: set[str] = field(default_factory=set)
    response_headers: dict[str, str] = field(default_factory=dict)
    status: int = 0
    vars: dict[str, Any] = field(default_factory=dict)

    def header(self, name: str) -> str | None:
        return self.request.header(name)

    def arg(self, name: str) -> str | None:
        args = self.vars.get("_args")
        if args is None:
            args = self.vars["_args"] = parse_qs(self.request.query, keep_blank_values=True)
        values = args.get(name)
        return values[0] if values else None

    def var(self, name: str) -> str | None:
        """A request variable, named as nginx/APISIX name them (``remote_addr``, ``uri``,
        ``http_x_api_key``, ``arg_page``, ``cookie_session``, ``consumer_name``...)."""
        if name == "remote_addr":
            return self.client_ip
        if name == "uri":
            return self.path
        if name == "host":
            return self.host
        if name == "request_uri":
            query = self.request.query
            return self.request.path + ("?" + query if query else "")
        if name in ("args", "query_string"):
            return self.request.query
        if name == "request_method":
            return self.request.method
        if name == "scheme":
            return self.request.scheme
        if name == "consumer_name":
            return self.consumer.username if self.consumer else None
        if name == "route_id":
            return self.route.id
        if name.startswith("http_"):
            return self.header(name[5:].replace("_", "-"))
        if name.startswith("arg_"):
            return self.arg(name[4:])
        if name.startswith("cookie_"):
            return _cookie(self.header("cookie"), name[7:])
        return None


def _cookie(header: str | None, name: str) -> str | None:
    if not header:
        return None
    try:
        jar = SimpleCookie(header)
    except CookieError:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


class PluginRuntime(Protocol):
    """The runtime side of one plugin attachment (one config)."""

    async def access(self, ctx: RequestContext) -> Reply | None: ...

    def header_filter(self, ctx: RequestContext, status: int, headers: dict[str, str]) -> None: ...

    def log(self, ctx: RequestContext) -> None: ...


class BasePluginRuntime:
    """Phases a plugin does not use do nothing."""

    async def access(self, ctx: RequestContext) -> Reply | None:
        return None

    def header_filter(self, ctx: RequestContext, status: int, headers: dict[str, str]) -> None:
        return None

    def log(self, ctx: RequestContext) -> None:
        return None
