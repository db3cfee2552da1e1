"""What a plugin sees of a request, and what it may do to it.

A chain is built once per config snapshot (``environment_runtime``); per request only a
``RequestContext`` is allocated. Plugins run in phases:

* ``access`` — before the upstream is chosen, in chain order; a plugin may answer the
  request itself by returning a ``Reply`` (401, 403, 429, a cache hit...), which ends the
  access phase; it may set the consumer, rewrite the upstream path, add upstream headers.
* ``header_filter`` — once the response status and headers are known (from the upstream or a
  plugin's reply), in chain order; it may add, replace or delete response headers, and change
  the status the client gets by setting ``ctx.status``. A plugin that needs the body appends a
  filter to ``ctx.body_filters`` here.

  A plugin whose ``header_filter`` only reads the head (a logger keeping the headers for its
  entry) says so: ``observes_response()`` returns True. When every header filter of the
  chain only observes, the node's usual answer is relayed as it came, its head never taken
  apart nor rebuilt (``answer_filters.ObservedAnswer``), and these ``header_filter`` are
  not called: the head is kept on ``ctx.response_head`` instead (a ``RelayedHead``, taken
  apart when read), where an observer finds it in its log phase or later. Any other answer
  (a plugin's reply, a head that has to be taken apart) calls them as before, and
  ``ctx.response_head`` stays None.
* body filters — each body chunk passes through the filters in the order they were added, as
  nginx's body filters do: ``filter(ctx, chunk, last)`` returns what goes on (it may hold data
  back and release it when ``last`` is true). A filter that changes the body's length must
  delete ``content-length`` in its header_filter (the response is then sent chunked). A
  filter that holds everything back until ``last`` may find the body unusable (xml-to-json's
  malformed XML, a SOAP fault): it raises ``http.errors.AnswerReplaced`` with the answer the
  client gets instead, head and all, which nothing of the node's answer has left before.
* ``log`` — after the response was sent; must not block (queue, don't send). The outcome is on
  the context: ``status``, ``started``/``finished``, ``upstream_seconds``, byte counts.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from http.cookies import CookieError, SimpleCookie
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import parse_qs, unquote_plus

from mypy_extensions import mypyc_attr

from portico.gateway.http.forwarding import LineRelay
from portico.gateway.http.response_lines import header_pairs
from portico.gateway.http.upstream_contract import Timeouts
from portico.gateway.route_keys import NO_ROUTE_KEYS, RouteKeys

if TYPE_CHECKING:
    from portico.gateway.http.server import Request
    from portico.gateway.request_ids import RequestIdPolicy
    from portico.gateway.snapshot import SnapshotConsumer, SnapshotProduct, SnapshotRoute


class Reply:
    """A response produced by the gateway itself (not proxied). (A plain class: see
    ``http.request.Request``.)"""

    __slots__ = ("body", "headers", "status")

    def __init__(
        self, status: int, body: bytes = b"", headers: list[tuple[str, str]] | None = None
    ) -> None:
        self.status = status
        self.body = body
        self.headers = headers if headers is not None else []

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


BodyFilter = Callable[["RequestContext", bytes, bool], bytes]

#: ``ctx.vars`` key of what plugins expose to log entries: entry key → value (product-quota's
#: ``ctx_namespace``)
EXPOSED: Final = "_exposed"


class DirectUpstream:
    """Where a plugin sends the request instead of the route's upstream: ai-proxy's LLM
    provider (APISIX's ai-proxy sets ``ctx.custom_upstream_*`` the same way). The gateway
    forwards it with its own engine (pooled connections, streamed answer, the plugins' header
    and body filters), without the route's balancer, retries or health checks.

    ``address`` is the one the egress guard checked for ``server_name`` (the connection goes
    there, so a DNS answer that changes after the check cannot redirect it); ``host_header``
    and ``server_name`` (TLS) keep the provider's name. Without ``keepalive`` each request
    gets a connection of its own, closed after the answer. (A plain class: see
    ``http.request.Request``.)"""

    __slots__ = (
        "address",
        "host_header",
        "keepalive",
        "path",
        "port",
        "server_name",
        "timeouts",
        "tls",
    )

    def __init__(
        self,
        address: str,
        port: int,
        tls: bool,
        server_name: str,
        host_header: str,
        path: str,
        timeouts: Timeouts,
        keepalive: bool = True,
    ) -> None:
        self.address = address
        self.port = port
        self.tls = tls
        self.server_name = server_name
        self.host_header = host_header
        self.path = path  # with the query the provider gets, if any
        self.timeouts = timeouts
        self.keepalive = keepalive


class ResponseHeaders:
    """The response's headers as header filters see them: names lower-case, repeated headers
    (``set-cookie``) kept. Setting a name replaces every value it had; ``add`` appends one."""

    __slots__ = ("_items",)

    def __init__(
        self, items: list[tuple[str, str]] | None = None, *, lower_case: bool = False
    ) -> None:
        if not items:
            self._items: list[tuple[str, str]] = []
        elif lower_case:  # the HTTP engine's: taken as they are, not copied
            self._items = items
        else:
            self._items = [(k.lower(), v) for k, v in items]

    @classmethod
    def lowered(cls, items: list[tuple[str, str]]) -> ResponseHeaders:
        """Headers whose names are lower-case already (the HTTP engine's): not copied again."""
        return cls(items, lower_case=True)

    def get(self, name: str, default: str | None = None) -> str | None:
        name = name.lower()
        for key, value in self._items:
            if key == name:
                return value
        return default

    def get_all(self, name: str) -> list[str]:
        name = name.lower()
        return [value for key, value in self._items if key == name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __setitem__(self, name: str, value: str) -> None:
        name = name.lower()
        items = self._items
        for key, _ in items:
            if key == name:  # replaced: its other values go too
                items = self._items = [item for item in items if item[0] != name]
                break
        items.append((name, value))

    def __delitem__(self, name: str) -> None:
        self.pop(name)

    def pop(self, name: str, default: str | None = None) -> str | None:
        name = name.lower()
        found = self.get(name, default)
        self._items = [item for item in self._items if item[0] != name]
        return found

    def remove(self, names: frozenset[str]) -> None:
        """Every value of each of ``names`` (lower-case) removed, in one pass: a filter
        dropping several headers at once (``pop`` copies the list once per name)."""
        items = self._items
        for key, _ in items:
            if key in names:
                self._items = [item for item in items if item[0] not in names]
                return

    def setdefault(self, name: str, value: str) -> str:
        found = self.get(name)
        if found is None:
            self._items.append((name.lower(), value))
            return value
        return found

    def add(self, name: str, value: str) -> None:
        self._items.append((name.lower(), value))

    def update(self, values: dict[str, str] | list[tuple[str, str]]) -> None:
        if not isinstance(values, dict):
            for name, value in values:  # a name given twice: the last value stands
                self[name] = value
            return
        added = [(name.lower(), value) for name, value in values.items()]
        names = {name for name, _ in added}
        items = self._items
        if any(key in names for key, _ in items):
            items = self._items = [item for item in items if item[0] not in names]
        items += added

    def items(self) -> list[tuple[str, str]]:
        return list(self._items)


class RelayedHead:
    """The head of a node's answer relayed as it came, as observers read it (see the module
    docstring): the node's wire lines (``Connection.lines``' pieces), the headers a plugin
    set, sent after them (names lower-cased), and the request id the responder tagged it
    with (its ``tag``: the request id's header, or None when the route's request-id plugin
    keeps it out of answers). Nothing is taken apart until ``items`` is called (a logger does
    it when it builds its entries, off the request's path)."""

    __slots__ = ("_added", "_lines", "_tag")

    def __init__(
        self,
        lines: list[bytes],
        added: list[tuple[str, str]] | None,
        tag: tuple[str, str] | None,
    ) -> None:
        self._lines = lines  # a new list per answer: nothing changes it once relayed
        self._added = added
        self._tag = tag

    @property
    def lines(self) -> list[bytes]:
        """The node's header lines as ``Connection.lines`` keeps them: name, ``": "``,
        value, CRLF."""
        return self._lines

    @property
    def added(self) -> list[tuple[str, str]] | None:
        return self._added

    @property
    def tag(self) -> tuple[str, str] | None:
        """The request id's header (name lower-cased, value), sent last; None when kept out."""
        return self._tag

    def items(self) -> list[tuple[str, str]]:
        """(name lower-cased, value) pairs in the order sent, as ``ResponseHeaders.items``
        gives them on the path that takes the head apart (the request id last)."""
        pairs = header_pairs(self._lines)
        if self._added:
            pairs.extend(self._added)
        if self._tag is not None:
            pairs.append(self._tag)
        return pairs


class RequestContext:
    """One request's state across the phases. Built for every routed request, so it costs
    only what it holds: the outcome fields default at class level, and the containers a
    plugin may fill (``upstream_headers``, ``remove_upstream_headers``, ``response_headers``,
    ``vars``, ``body_filters``) are made on first use; the gateway reads their ``_`` fields
    to see whether any plugin did."""

    consumer: SnapshotConsumer | None = None
    #: the product whose quota metered the request (set by product-quota), for telemetry
    product: SnapshotProduct | None = None
    upstream_path: str | None = None
    #: set by a plugin that sends the request elsewhere than the route's upstream
    direct: DirectUpstream | None = None
    status: int = 0
    # the outcome, for the log phase
    finished: float = 0.0  # time.perf_counter() when the response was sent
    upstream_seconds: float | None = None  # None: not proxied
    upstream_addr: str | None = None
    request_bytes: int = 0
    response_bytes: int = 0
    #: whether the response came from the upstream (False: a plugin or the gateway answered)
    proxied: bool = False
    #: the route's ``RouteRuntime.rollup_keys`` (set by ``Gateway.handle``): what telemetry
    #: rolls the request up by
    rollup_keys: RouteKeys = NO_ROUTE_KEYS
    #: the head as relayed, when observers did not see it in ``header_filter`` (see the module
    #: docstring): its parts, read whole by ``response_head`` (kept as fields: an object for
    #: them cost more than the logger that reads them saved)
    relayed_lines: list[bytes] | None = None
    relayed_added: list[tuple[str, str]] | None = None
    relayed_tag: tuple[str, str] | None = None
    #: the header the request id travels in (upstream, and back unless
    #: ``request_id_in_response`` is False): the route's request-id plugin may change both
    request_id_header: str = "x-request-id"
    request_id_in_response: bool = True
    #: the W3C ``traceparent`` the upstream gets, replacing the client's (set by trace-export
    #: in its access phase, sent by ``upstream_request.extra_headers``; a field rather than an
    #: entry of ``upstream_headers``, a dict made per request: measured), and the client's
    #: span id (16 hex digits) when the request came in the client's trace, else ""
    traceparent: str | None = None
    trace_parent_id: str = ""
    _upstream_headers: dict[str, str] | None = None
    _remove_upstream_headers: set[str] | None = None
    _response_headers: dict[str, str] | None = None
    _vars: dict[str, Any] | None = None
    _body_filters: list[BodyFilter] | None = None

    def __init__(
        self,
        request: Request,
        route: SnapshotRoute,
        params: dict[str, str],
        path: str,
        host: str,
        client_ip: str,
        request_id: str,
        started: float,
    ) -> None:
        self.request = request
        self.route = route
        self.params = params
        self.path = path  # normalised; what the upstream receives unless a plugin rewrites it
        self.host = host
        self.client_ip = client_ip
        self.request_id = request_id
        self.started = started  # time.perf_counter() when the request was routed

    @property
    def upstream_headers(self) -> dict[str, str]:
        """Headers set for the upstream (lower-case names; ``host`` replaces the Host)."""
        found = self._upstream_headers
        if found is None:
            found = self._upstream_headers = {}
        return found

    @property
    def remove_upstream_headers(self) -> set[str]:
        """Request headers (lower-case names) the upstream does not get."""
        found = self._remove_upstream_headers
        if found is None:
            found = self._remove_upstream_headers = set()
        return found

    @property
    def response_headers(self) -> dict[str, str]:
        """Headers set on the response before the header filters run."""
        found = self._response_headers
        if found is None:
            found = self._response_headers = {}
        return found

    @property
    def vars(self) -> dict[str, Any]:
        """Per-request scratch space shared by the plugins."""
        found = self._vars
        if found is None:
            found = self._vars = {}
        return found

    @property
    def body_filters(self) -> list[BodyFilter]:
        """See the module docstring."""
        found = self._body_filters
        if found is None:
            found = self._body_filters = []
        return found

    @property
    def response_head(self) -> RelayedHead | None:
        """The head as relayed, when observers did not see it in ``header_filter`` (see the
        module docstring); None otherwise."""
        lines = self.relayed_lines
        if lines is None:
            return None
        return RelayedHead(lines, self.relayed_added, self.relayed_tag)

    def keep_relayed_head(
        self, lines: list[bytes], added: list[tuple[str, str]] | None, tag: tuple[str, str] | None
    ) -> None:
        """Keep the head relayed as it came, for observers (``response_head``)."""
        self.relayed_lines = lines
        self.relayed_added = added
        self.relayed_tag = tag

    @property
    def latency(self) -> float:
        """Seconds from routing to the last byte sent."""
        return max(0.0, self.finished - self.started)

    def header(self, name: str) -> str | None:
        return self.request.header(name)

    def arg(self, name: str) -> str | None:
        args = self.vars.get("_args")
        if args is None:
            args = self.vars["_args"] = parse_qs(self.request.query, keep_blank_values=True)
        values = args.get(name)
        return values[0] if values else None

    def drop_argument(self, name: str) -> None:
        """Forward the query without the arguments called ``name`` (a credential a plugin
        hides, as APISIX's ``set_uri_args`` does); later readers see it as forwarded."""
        request = self.request
        request.query = without_argument(request.query, name)
        found = self._vars
        if found is not None:
            found.pop("_args", None)

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
        if name == "request_id":
            return self.request_id
        if name == "route_id":
            return self.route.id
        if name.startswith("http_"):
            return self.header(name[5:].replace("_", "-"))
        if name.startswith("arg_"):
            return self.arg(name[4:])
        if name.startswith("cookie_"):
            return _cookie(self.header("cookie"), name[7:])
        found = self._vars  # what an earlier plugin exposed (product-quota's ctx_namespace)
        if found is not None:
            value = found.get(name)
            if isinstance(value, str):
                return value
        return None


def without_argument(query: str, name: str) -> str:
    """``query`` without the arguments whose (decoded) name is ``name``; the others byte for
    byte, in their order."""
    kept: list[str] = []
    for part in query.split("&"):
        if part and unquote_plus(part.partition("=")[0]) != name:
            kept.append(part)
    return "&".join(kept)


def _cookie(header: str | None, name: str) -> str | None:
    if not header:
        return None
    try:
        jar = SimpleCookie(header)
    except CookieError:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


#: what ``access`` returns: its verdict (a reply, or None to go on), or, for a plugin that
#: must wait for something (Redis, a JWKS, the disk), an awaitable of it
Access = Reply | None | Awaitable[Reply | None]


class PluginRuntime(Protocol):
    """The runtime side of one plugin attachment (one config)."""

    def access(self, ctx: RequestContext) -> Access: ...

    def header_filter(self, ctx: RequestContext, status: int, headers: ResponseHeaders) -> None: ...

    def log(self, ctx: RequestContext) -> None: ...

    def observes_response(self) -> bool: ...

    def request_ids(self) -> RequestIdPolicy | None: ...


# the plugins' runtimes, interpreted, subclass it: see CONVENTIONS.md "Compiled modules"
@mypyc_attr(allow_interpreted_subclasses=True)
class BasePluginRuntime:
    """Phases a plugin does not use do nothing. A plugin's ``access`` is a plain method when
    it decides at once (most do: no coroutine per request), ``async`` when it has to wait."""

    def access(self, ctx: RequestContext) -> Access:
        return None

    def header_filter(self, ctx: RequestContext, status: int, headers: ResponseHeaders) -> None:
        return None

    def log(self, ctx: RequestContext) -> None:
        return None

    def observes_response(self) -> bool:
        """Whether ``header_filter`` only reads the head (see the module docstring): then it
        may not be called, and ``ctx.response_head`` holds the head instead. Asked once per
        chain."""
        return False

    def request_ids(self) -> RequestIdPolicy | None:
        """How the requests of the route get their id (the request-id plugin's policy), if
        this plugin says; None leaves the gateway's own. Asked once per chain."""
        return None

    def runs_access(self) -> bool:
        """Whether ``access`` does anything, for a plugin that overrides it only for some
        configurations (a logger's, only to read the body it logs). Asked once per chain,
        and only of plugins that override ``access``."""
        return True


class ResponsePhase:
    """The plugins of a chain that see the response head (``header_filter``), in chain
    order, worked out once per chain (``phase_plugins``). ``observed_only``: there are some
    and every one of them only reads it (``observes_response``), so that the node's answer
    may be relayed as it came."""

    __slots__ = ("filters", "observed_only", "observer")

    def __init__(self, filters: list[PluginRuntime] | None = None) -> None:
        self.filters: list[PluginRuntime] = filters if filters is not None else []
        #: the relay of an ``observed_only`` chain, made on first use
        #: (``answer_filters.on_response_of``, which owns its class)
        self.observer: LineRelay | None = None
        self.observed_only = bool(self.filters) and all(
            plugin.observes_response() for plugin in self.filters
        )


def access_free(plugins: Iterable[PluginRuntime]) -> bool:
    """Whether none of ``plugins`` does anything in the access phase: the base class's
    ``access`` or a ``runs_access()`` that says so (loggers that log no request body). Such a
    chain is proxied as one with no plugin, without an access phase per request (one was
    ~900 instructions for nothing). Worked out once per chain."""
    for plugin in plugins:
        if getattr(type(plugin), "access", None) is BasePluginRuntime.access:
            continue
        decide = getattr(plugin, "runs_access", None)
        if decide is None or decide():
            return False
    return True


def phase_plugins(
    plugins: Iterable[PluginRuntime],
) -> tuple[ResponsePhase, list[PluginRuntime]]:
    """Of ``plugins`` (in chain order), those whose ``header_filter`` and those whose ``log``
    do something: the base class's do nothing, and the response and log phases of every
    request need not call them. Worked out once per chain."""
    filters: list[PluginRuntime] = []
    loggers: list[PluginRuntime] = []
    for plugin in plugins:
        kind = type(plugin)
        if getattr(kind, "header_filter", None) is not BasePluginRuntime.header_filter:
            filters.append(plugin)
        if getattr(kind, "log", None) is not BasePluginRuntime.log:
            loggers.append(plugin)
    if not filters and not loggers:
        # the phases of every chain without them: one pair, shared, which a request reads
        # warm from the cache whichever of thousands of routes it took
        return NO_RESPONSE_PHASE, NO_LOGGERS
    return ResponsePhase(filters), loggers


#: what ``phase_plugins`` gives a chain none of whose plugins sees the response or logs
#: (never changed: each chain that has some gets lists of its own)
NO_RESPONSE_PHASE: Final = ResponsePhase()
NO_LOGGERS: Final[list[PluginRuntime]] = []
