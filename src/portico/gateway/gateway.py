"""The request pipeline: host → environment, path → route, plugin chain, upstream.

A service forwards traffic only when all of the seed's five conditions hold: the request
reaches a gateway hostname of an environment (else 404, never proxied — the portal's own
host is not a gateway host), the environment has a deployed API (else no routes: 404),
a route's match rules accept it (else 404), that route targets an upstream (else 502), and
the plugin chain lets it through.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs

from portico.gateway.balancing.nodes import Node, PickContext
from portico.gateway.context import (
    PluginRuntime,
    Reply,
    RequestContext,
    ResponseHeaders,
    phase_plugins,
)
from portico.gateway.counters.local import LocalCounters
from portico.gateway.environment_runtime import (
    Chain,
    EnvironmentRuntime,
    HealthRegistry,
    RouteRuntime,
    SnapshotRefused,
    UpstreamRuntime,
    build_environment,
)
from portico.gateway.http.body import EMPTY_BODY
from portico.gateway.http.forwarding import FailureKind, answer_failure
from portico.gateway.http.proxy import (
    AddedHeaders,
    BodyTransform,
    Forwarding,
    OnResponse,
    Outcome,
    ProxyResult,
    forward,
    forward_now,
    with_added,
)
from portico.gateway.http.responder import TAKEN, Taken
from portico.gateway.http.server import Request, Responder
from portico.gateway.http.upstream import UpstreamPool, UpstreamResponse
from portico.gateway.node_options import GatewayOptions
from portico.gateway.plugin_services import ConsumerIndex, RuntimeServices
from portico.gateway.routing.client_address import ClientAddress
from portico.gateway.routing.paths import PathRejected, normalize_path
from portico.gateway.sealing import secret_box
from portico.gateway.shared_resources import SharedResources
from portico.gateway.telemetry.metrics import GatewayMetrics

if TYPE_CHECKING:
    from portico.gateway.snapshot import SnapshotConsumer

logger: Final = logging.getLogger("portico.gateway")

#: (a Final alias: see CONVENTIONS.md "Compiled modules")
_clock: Final = time.perf_counter
_REQUEST_ID: Final = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
JSON: Final = [("content-type", "application/json")]


def error_body(message: str) -> bytes:
    return ('{"error_msg":"' + message.replace('"', "'") + '"}').encode()


class RequestIds:
    """Random request ids (32 hex digits) drawn from the kernel's generator 256 at a time: one
    getrandom() system call per request cost more than the rest of making the id."""

    __slots__ = ("_at", "_text")

    BATCH: Final = 256

    def __init__(self) -> None:
        self._text = ""  # (filled on first use: a process forked before then draws its own)
        self._at = 0

    def next(self) -> str:
        at = self._at
        if at >= len(self._text):
            self._text = os.urandom(16 * self.BATCH).hex()
            at = 0
        self._at = at + 32
        return self._text[at : at + 32]


class HostTable:
    """Host header → environment. The answer for each Host value seen is remembered (a
    keep-alive client sends the same one every time), up to ``MEMO_SIZE`` values."""

    MEMO_SIZE = 4096

    __slots__ = ("_memo", "exact", "wildcards")

    def __init__(self, exact: dict[str, str], wildcards: list[tuple[str, str]]) -> None:
        self.exact = exact
        self.wildcards = wildcards  # (".example.com", env id), longest suffix first
        self._memo: dict[str, tuple[str, str | None]] = {}

    @classmethod
    def build(cls, environments: dict[str, EnvironmentRuntime]) -> HostTable:
        exact: dict[str, str] = {}
        wildcards: list[tuple[str, str]] = []
        for env_id, runtime in environments.items():
            for host in runtime.snapshot.gateway_hosts:
                if host.startswith("*."):
                    wildcards.append((host[1:], env_id))
                else:
                    exact[host] = env_id
        wildcards.sort(key=lambda item: -len(item[0]))
        return cls(exact, wildcards)

    def find(self, host: str) -> str | None:
        found = self.exact.get(host)
        if found is not None:
            return found
        for suffix, env_id in self.wildcards:
            if host.endswith(suffix) and len(host) > len(suffix):
                return env_id
        return None

    def lookup(self, raw: str) -> tuple[str, str | None]:
        """The host a Host header value names (see :func:`host_of`) and its environment."""
        found = self._memo.get(raw)
        if found is None:
            host = host_of(raw)
            found = (host, self.find(host))
            memo = self._memo
            if len(memo) >= self.MEMO_SIZE:
                memo.clear()  # many distinct Host values: a client making them up
            memo[raw] = found
        return found


#: round robin, least connections and EWMA read nothing of the request
_NO_PICK_CONTEXT: Final = PickContext(client_ip="", headers={}, args={}, consumer=None, vars={})


def request_bytes_of(request: Request) -> int:
    return request.body.received


def body_transform(ctx: RequestContext) -> BodyTransform:
    """The context's body filters as one ``(chunk, last) → bytes`` for the proxy."""
    filters = list(ctx.body_filters)

    def transform(chunk: bytes, last: bool) -> bytes:
        for body_filter in filters:
            chunk = body_filter(ctx, chunk, last)
        return chunk

    return transform


def host_of(raw: str) -> str:
    """A Host header without its port, lower-cased (IPv6 literals keep their brackets)."""
    raw = raw.strip().lower()
    if raw.startswith("["):
        return raw.split("]", 1)[0] + "]"
    return raw.rsplit(":", 1)[0] if raw.count(":") == 1 else raw


class Gateway:
    """Serves every environment it was given; ``apply`` swaps one environment's config."""

    def __init__(
        self,
        *,
        pool: UpstreamPool | None = None,
        options: GatewayOptions | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.pool = pool or UpstreamPool()
        self.now = now  # the wall clock plugins read (epoch seconds; tests move it)
        self.options = options or GatewayOptions()
        self.counters = LocalCounters()
        self.health = HealthRegistry()
        self.resources = SharedResources()
        self.secrets = secret_box(self.options.secret_keys) if self.options.secret_keys else None
        self.egress = self.options.egress()
        self.client_address = ClientAddress(self.options.trusted_networks())
        self.environments: dict[str, EnvironmentRuntime] = {}
        self.hosts = HostTable({}, [])
        self.request_ids = RequestIds()
        #: called after the log phase of every request that reached a route (telemetry)
        self.observers: list[Callable[[EnvironmentRuntime, RequestContext], None]] = []
        #: the process's Prometheus registry, served at /metrics on the status listener
        self.metrics = GatewayMetrics()
        self.metrics.watch(lambda: self.environments, self.health.live)

    @property
    def ready(self) -> bool:
        return bool(self.environments)

    def versions(self) -> dict[str, int]:
        return {env_id: runtime.version for env_id, runtime in self.environments.items()}

    def services(self, env_id: str, consumers: ConsumerIndex) -> RuntimeServices:
        # plugins find the gateway's registry as services.shared("metrics", "", ...)
        self.resources.get(env_id, "metrics", "", lambda: self.metrics)
        return RuntimeServices(
            consumers,
            self.counters,
            env_id=env_id,
            secrets=self.secrets,
            egress=self.egress,
            resources=self.resources,
            cache_dir=self.options.cache_dir,
            node_id=self.options.node_id,
            now=self.now,
            quota_redis_url=self.options.quota_redis_url,
        )

    async def apply(self, document: Mapping[str, Any]) -> EnvironmentRuntime:
        """Build and swap in one environment's snapshot; :class:`SnapshotRefused` leaves the
        previous one serving."""
        env_id = str(document.get("environment_id", "")) if isinstance(document, Mapping) else ""
        try:
            runtime, fresh = build_environment(document, services=self.services, health=self.health)
        except SnapshotRefused:
            self.resources.abandon(env_id)
            raise
        environments = {**self.environments, runtime.snapshot.environment_id: runtime}
        hosts = HostTable.build(environments)
        self.environments, self.hosts = environments, hosts  # the swap
        self.resources.commit(runtime.snapshot.environment_id)
        for checker in fresh:
            await checker.start()
        await self._retire()
        logger.info(
            "environment %s now at config version %s",
            runtime.snapshot.environment_name,
            runtime.version,
        )
        return runtime

    async def remove(self, env_id: str) -> None:
        environments = {k: v for k, v in self.environments.items() if k != env_id}
        self.environments, self.hosts = environments, HostTable.build(environments)
        self.resources.forget(env_id)
        await self._retire()

    async def _retire(self) -> None:
        used = {u for env in self.environments.values() for u in env.upstreams}
        await self.health.retire(used)
        await self.resources.collect()

    async def close(self) -> None:
        await self.health.retire(set())
        await self.resources.aclose()
        await self.pool.close()

    # ------------------------------------------------------------------ per request

    def handle(
        self, request: Request, responder: Responder
    ) -> Coroutine[Any, Any, None] | Taken | None:
        """The pipeline, run at once as far as it can go: answered here (None), forwarded by
        callbacks (``TAKEN``), or continued in a coroutine from the first plugin verdict or
        proxy step that has to wait."""
        incoming_id = request.request_id
        if incoming_id and _REQUEST_ID.match(incoming_id):
            request_id = incoming_id
        else:
            request_id = self.request_ids.next()
        responder.tag = ("x-request-id", request_id)  # on every answer, errors included
        host, env_id = self.hosts.lookup(request.host)
        if env_id is None:
            responder.send(404, JSON, error_body("404 Route Not Found"))
            return None
        env = self.environments[env_id]
        try:
            path = normalize_path(request.path)
        except PathRejected:
            responder.send(400, JSON, error_body("400 Bad Request: invalid path"))
            return None
        match = env.router.match(request.method, host, path)
        if match is None:
            responder.send(404, JSON, error_body("404 Route Not Found"))
            return None
        route = env.routes[match.route.id]
        if route.unsupported:
            message = f"503 plugin {route.unsupported[0]} is not supported by this gateway"
            responder.send(503, JSON, error_body(message))
            return None
        ctx = RequestContext(
            request,
            match.route,
            match.params,
            path,
            host,
            self.client_address.of(request),
            request_id,
            _clock(),
        )
        ctx.rollup_key = route.rollup_key
        if not route.chain:
            return self._proxy_now(env, route, route.header_filters, route.loggers, ctx, responder)
        access = AccessPhase(route.chain, ctx.consumer)
        pending = self._access(env, access, ctx)
        if pending is not None:
            return self._handle_later(env, route, ctx, responder, access, pending)
        filters, loggers = access.phases(route)
        if access.reply is not None:
            self._reply(filters, ctx, access.reply, responder)
            self._log(env, ctx, loggers)
            return None
        return self._proxy_now(env, route, filters, loggers, ctx, responder)

    async def _handle_later(
        self,
        env: EnvironmentRuntime,
        route: RouteRuntime,
        ctx: RequestContext,
        responder: Responder,
        access: AccessPhase,
        pending: Awaitable[Reply | None] | None,
    ) -> None:
        """``handle`` from a plugin verdict that has to be awaited."""
        while pending is not None:
            reply = await pending
            if reply is not None:
                access.reply = reply
                break
            self._consumer_known(env, access, ctx)
            pending = self._access(env, access, ctx)
        filters, loggers = access.phases(route)
        if access.reply is not None:
            self._reply(filters, ctx, access.reply, responder)
        else:
            await self._proxy(route, filters, ctx, responder)
        self._log(env, ctx, loggers)

    def _log(
        self, env: EnvironmentRuntime, ctx: RequestContext, loggers: list[PluginRuntime]
    ) -> None:
        ctx.finished = _clock()
        for plugin in loggers:
            plugin.log(ctx)
        for observe in self.observers:
            observe(env, ctx)

    def _access(
        self, env: EnvironmentRuntime, access: AccessPhase, ctx: RequestContext
    ) -> Awaitable[Reply | None] | None:
        """Run the access phase on from ``access.index`` until a plugin replies
        (``access.reply``), the chain ends (None), or a verdict has to be awaited (returned).

        Once an authentication plugin names the consumer, the consumer's own plugins REPLACE
        same-named ones for the rest of the chain (the consumer scope is the narrowest). A
        reply ends the access phase only: as in APISIX, every plugin of the chain still sees
        the response and logs it (CORS headers on a 401, the 401 in the metrics)."""
        while access.index < len(access.chain):
            plugin = access.chain[access.index][1]
            access.index += 1
            verdict = plugin.access(ctx)
            if verdict is None:
                self._consumer_known(env, access, ctx)
            elif isinstance(verdict, Reply):
                access.reply = verdict
                return None
            else:
                return verdict
        return None

    @staticmethod
    def _consumer_known(env: EnvironmentRuntime, access: AccessPhase, ctx: RequestContext) -> None:
        """After a plugin let the request through: if it named a new consumer, that consumer's
        plugins replace same-named ones among the rest of the chain."""
        consumer = ctx.consumer
        if consumer is access.consumer or consumer is None:
            return
        access.consumer = consumer
        own = env.consumer_chains.get(consumer.username)
        if own:
            chain, index = access.chain, access.index
            names = {a.name for a, _ in own} | {chain[index - 1][0].name}
            kept = [item for item in chain[index:] if item[0].name not in names]
            rest = sorted(kept + own, key=lambda item: (item[0].order, item[0].name))
            access.chain = chain[:index] + rest  # a new list: the route's is shared

    @staticmethod
    def _filter_headers(
        filters: list[PluginRuntime],
        ctx: RequestContext,
        status: int,
        headers: list[tuple[str, str]],
        *,
        lower_case: bool,
    ) -> list[tuple[str, str]]:
        """The response's headers: those the plugins set (``ctx.response_headers``), then
        every header filter's edits. The X-Request-Id set last is also the responder's tag:
        it is here for what the filters and loggers see. With no filter to see them, the
        headers are merged as they are."""
        added = ctx._response_headers
        if not filters:
            if not added:
                return headers
            pairs = [(name.lower(), value) for name, value in added.items()]
            return with_added(headers, pairs, lower_case=lower_case)
        seen = ResponseHeaders(headers, lower_case=lower_case)
        if added:
            seen.update(added)
        for plugin in filters:
            plugin.header_filter(ctx, status, seen)
        seen["x-request-id"] = ctx.request_id
        return seen.items()

    def _reply(
        self,
        filters: list[PluginRuntime],
        ctx: RequestContext,
        reply: Reply,
        responder: Responder,
    ) -> None:
        ctx.status = reply.status
        headers = self._filter_headers(filters, ctx, reply.status, reply.headers, lower_case=False)
        body = reply.body
        for body_filter in ctx._body_filters or ():
            body = body_filter(ctx, body, True)
        responder.send(ctx.status, headers, body)  # a header filter may change it
        ctx.request_bytes = request_bytes_of(ctx.request)
        ctx.response_bytes = len(body)

    def _proxy_now(
        self,
        env: EnvironmentRuntime,
        route: RouteRuntime,
        filters: list[PluginRuntime],
        loggers: list[PluginRuntime],
        ctx: RequestContext,
        responder: Responder,
    ) -> Coroutine[Any, Any, None] | Taken | None:
        """Forward by callbacks (``forward_now``) a request without a body that has an idle
        pooled connection to its node; anything else in a coroutine (``_proxy``)."""
        upstream = route.upstream
        if upstream is None:
            self._no_upstream(ctx, responder)
            self._log(env, ctx, loggers)
            return None
        request = ctx.request
        first: Node | None = None
        if request.body is EMPTY_BODY and not request.upgrade:
            balancer = upstream.balancer
            first = balancer.pick(self._pick_context(ctx, upstream))
            if first is not None:
                balancer.started(first)
                conn = self.pool.take(first.host, first.port, upstream.tls)
                if conn is not None:
                    proxied = Proxied(self, env, route, first, filters, loggers, ctx, responder)
                    forwarding = self._forwarding(filters, ctx, upstream)
                    forward_now(request, responder, conn, forwarding, first.address, proxied)
                    return TAKEN
        return self._proxy_later(env, route, filters, loggers, ctx, responder, first)

    async def _proxy_later(
        self,
        env: EnvironmentRuntime,
        route: RouteRuntime,
        filters: list[PluginRuntime],
        loggers: list[PluginRuntime],
        ctx: RequestContext,
        responder: Responder,
        first: Node | None,
    ) -> None:
        await self._proxy(route, filters, ctx, responder, first)
        self._log(env, ctx, loggers)

    @staticmethod
    def _no_upstream(ctx: RequestContext, responder: Responder) -> None:
        ctx.status = answer_failure(responder, FailureKind.NO_UPSTREAM)

    @staticmethod
    def _pick_context(ctx: RequestContext, upstream: UpstreamRuntime) -> PickContext:
        if not upstream.hashed:
            return _NO_PICK_CONTEXT
        # only a hash key reads headers, arguments and variables
        request = ctx.request
        return PickContext(
            client_ip=ctx.client_ip,
            headers=dict(request.headers),
            args={k: v[0] for k, v in parse_qs(request.query).items()},
            consumer=ctx.consumer.username if ctx.consumer else None,
            vars={"uri": ctx.path, "host": ctx.host, "remote_addr": ctx.client_ip},
        )

    def _forwarding(
        self, filters: list[PluginRuntime], ctx: RequestContext, upstream: UpstreamRuntime
    ) -> Forwarding:
        """How the request is forwarded, whichever path takes it."""
        return Forwarding(
            ctx.upstream_path or ctx.path,
            self._upstream_host(ctx, upstream),
            self._extra_headers(ctx),
            upstream.timeouts,
            upstream.retries,
            upstream.tls,
            self._on_response(filters, ctx),
        )

    @staticmethod
    def _extra_headers(ctx: RequestContext) -> list[tuple[str, str]]:
        """The headers the plugins add for the upstream (and the request id); those they
        remove are taken out of the request's."""
        request = ctx.request
        removed = ctx._remove_upstream_headers
        if removed:
            request.headers = [(k, v) for k, v in request.headers if k not in removed]
        extra = [("x-request-id", ctx.request_id)]
        if ctx._upstream_headers:
            extra += [(k, v) for k, v in ctx._upstream_headers.items() if k != "host"]
        return extra

    def _on_response(self, filters: list[PluginRuntime], ctx: RequestContext) -> OnResponse | None:
        """What the proxy calls with the upstream's answer: None when nothing rewrites it (the
        responder tags it with the request id; ``_account`` notes the status)."""
        if not filters:
            added = ctx._response_headers
            if not added:
                return None
            if not ctx._body_filters:
                plain = AddedHeaders.of(added)  # (the usual answer keeps its lines; see proxy)
                if plain is not None:
                    return plain

        def on_response(
            response: UpstreamResponse, headers: list[tuple[str, str]]
        ) -> tuple[list[tuple[str, str]], BodyTransform | None]:
            ctx.status = response.status
            out = self._filter_headers(filters, ctx, response.status, headers, lower_case=True)
            # a header filter may change the status the client gets (response-rewrite); the
            # proxy sends response.status, and judges the node by the status it answered
            response.status = ctx.status
            return out, body_transform(ctx) if ctx._body_filters else None

        return on_response

    async def _proxy(
        self,
        route: RouteRuntime,
        filters: list[PluginRuntime],
        ctx: RequestContext,
        responder: Responder,
        first: Node | None = None,
    ) -> None:
        """Forward in a coroutine; ``first``: the node already picked (and started) for it."""
        upstream = route.upstream
        if upstream is None:
            self._no_upstream(ctx, responder)
            return
        request = ctx.request
        pick = self._pick_context(ctx, upstream)
        tried: list[Node] = []
        balancer = upstream.balancer

        def next_target() -> Node | None:
            if first is not None and not tried:
                tried.append(first)
                return first
            node = balancer.pick(pick, exclude=tried)
            if node is not None:
                tried.append(node)
                balancer.started(node)
            return node

        forwarding = self._forwarding(filters, ctx, upstream)
        started = _clock()
        result = await forward(request, responder, forwarding, pool=self.pool, targets=next_target)
        self._account(upstream, tried, ctx, responder, result, _clock() - started)

    @staticmethod
    def _account(
        upstream: UpstreamRuntime,
        tried: list[Node],
        ctx: RequestContext,
        responder: Responder,
        result: ProxyResult,
        elapsed: float,
    ) -> None:
        """The outcome on the context, and the nodes' part in it for the balancer and the
        passive health checks."""
        ctx.status = responder.status or result.status  # what the client got (0: nothing sent)
        ctx.proxied = result.error_kind is None
        ctx.upstream_seconds = result.upstream_seconds
        ctx.upstream_addr = result.upstream_addr
        ctx.request_bytes = result.request_bytes
        ctx.response_bytes = result.response_bytes
        for failed in tried[:-1]:  # earlier tries failed to connect (the only retried failure)
            upstream.balancer.finished(failed, 0.0, False)
            upstream.health.report(failed, tcp_failure=True)
        if tried:
            node = tried[-1]
            kind = result.error_kind
            if kind in ("client", "no_node"):  # not the node's doing: no verdict on it
                upstream.balancer.finished(node, elapsed, True)
            else:
                upstream.balancer.finished(node, elapsed, kind is None and result.status < 500)
                upstream.health.report(
                    node,
                    status=result.status if kind is None else None,
                    tcp_failure=kind in ("connect", "reset"),
                    timeout=kind == "timeout",
                )

    @staticmethod
    def _upstream_host(ctx: RequestContext, upstream: UpstreamRuntime) -> str:
        if ctx._upstream_headers and "host" in ctx._upstream_headers:
            return ctx._upstream_headers["host"]
        if upstream.fixed_host is not None:
            return upstream.fixed_host
        return ctx.request.host or ctx.host


class AccessPhase:
    """Where the access phase of one request is: the chain (replaced once a consumer with
    plugins of its own is known), the next plugin, and the reply if a plugin gave one."""

    __slots__ = ("chain", "consumer", "index", "reply")

    def __init__(self, chain: Chain, consumer: SnapshotConsumer | None) -> None:
        self.chain = chain
        self.index = 0
        self.consumer = consumer
        self.reply: Reply | None = None

    def phases(self, route: RouteRuntime) -> tuple[list[PluginRuntime], list[PluginRuntime]]:
        """The header filters and loggers of the chain that ran."""
        if self.chain is route.chain:
            return route.header_filters, route.loggers
        return phase_plugins(plugin for _, plugin in self.chain)


class Proxied(Outcome):
    """A request forwarded by callbacks (``forward_now``): its outcome, once known, is
    accounted and logged as ``_proxy_later`` would (a plain object rather than closures: see
    CONVENTIONS.md "Compiled modules")."""

    __slots__ = (
        "_ctx",
        "_env",
        "_filters",
        "_gateway",
        "_loggers",
        "_node",
        "_responder",
        "_route",
        "_started",
    )

    def __init__(
        self,
        gateway: Gateway,
        env: EnvironmentRuntime,
        route: RouteRuntime,
        node: Node,
        filters: list[PluginRuntime],
        loggers: list[PluginRuntime],
        ctx: RequestContext,
        responder: Responder,
    ) -> None:
        self._gateway = gateway
        self._env = env
        self._route = route
        self._node = node
        self._filters = filters
        self._loggers = loggers
        self._ctx = ctx
        self._responder = responder
        self._started = _clock()

    def done(self, result: ProxyResult) -> None:
        elapsed = _clock() - self._started
        upstream = self._route.upstream
        assert upstream is not None
        ctx = self._ctx
        self._gateway._account(upstream, [self._node], ctx, self._responder, result, elapsed)
        self._gateway._log(self._env, ctx, self._loggers)

    def again(self) -> Coroutine[Any, Any, None]:
        """Forward in a coroutine after all, to the same node first (a stale connection)."""
        return self._gateway._proxy_later(
            self._env,
            self._route,
            self._filters,
            self._loggers,
            self._ctx,
            self._responder,
            self._node,
        )


__all__ = ["Gateway", "SnapshotRefused"]
