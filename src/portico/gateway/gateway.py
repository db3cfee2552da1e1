"""The request pipeline: host → environment, path → route, plugin chain, upstream.

A service forwards traffic only when all of the seed's five conditions hold: the request
reaches a gateway hostname of an environment (else 404, never proxied — the portal's own
host is not a gateway host), the environment has a deployed API (else no routes: 404),
a route's match rules accept it (else 404), that route targets an upstream (else 502), and
the plugin chain lets it through.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from portico.gateway.access_phase import AccessPhase
from portico.gateway.answer_filters import on_response_of, send_reply
from portico.gateway.balancing.nodes import Node
from portico.gateway.context import Reply, RequestContext, ResponsePhase
from portico.gateway.counters.local import LocalCounters
from portico.gateway.environment_runtime import (
    EnvironmentRuntime,
    HealthRegistry,
    RouteRuntime,
    SnapshotRefused,
    build_environment,
)
from portico.gateway.hosts import HostTable
from portico.gateway.http.body import EMPTY_BODY
from portico.gateway.http.forwarding import FailureKind, answer_failure
from portico.gateway.http.proxy import (
    SMALL_BODY,
    Outcome,
    ProxyResult,
    forward,
    forward_now,
    node_address,
)
from portico.gateway.http.responder import TAKEN, Taken
from portico.gateway.http.server import Request, Responder
from portico.gateway.http.upstream import UpstreamPool
from portico.gateway.node_options import GatewayOptions
from portico.gateway.plugin_services import ConsumerIndex, RuntimeServices
from portico.gateway.request_ids import STANDARD_HEADER, VALID_ID, RequestIds
from portico.gateway.routing.client_address import ClientAddress
from portico.gateway.routing.paths import PathRejected, normalize_path
from portico.gateway.sealing import secret_box
from portico.gateway.shared_resources import SharedResources
from portico.gateway.telemetry.metrics import GatewayMetrics
from portico.gateway.upstream_request import (
    OneTarget,
    account,
    direct_forwarding,
    forwarding_of,
    note_result,
    pick_context,
)

if TYPE_CHECKING:
    from portico.gateway.context import PluginRuntime

logger: Final = logging.getLogger("portico.gateway")

#: how long a snapshot waits for the first answers of its new discovered upstreams (seconds)
FIRST_ANSWERS_SECONDS: Final = 2.0
#: (a Final alias: see CONVENTIONS.md "Compiled modules")
_clock: Final = time.perf_counter
_valid_id: Final = VALID_ID.match
JSON: Final = [("content-type", "application/json")]


def error_body(message: str) -> bytes:
    return ('{"error_msg":"' + message.replace('"', "'") + '"}').encode()


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
        #: upstreams with discovery, resolved off the request path
        self.discovery = self.options.discovery()
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
        self.metrics.watch(lambda: self.environments, self.health.live, self.discovery.live)

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
            runtime, fresh = build_environment(
                document, services=self.services, health=self.health, discovery=self.discovery
            )
        except SnapshotRefused:
            self.resources.abandon(env_id)
            raise
        watchers = runtime.discovered
        if watchers:  # new discovered upstreams go into service with nodes when DNS answers
            await self.discovery.first_answers(watchers.values(), FIRST_ANSWERS_SECONDS)
            for upstream_id, watcher in watchers.items():
                upstream = runtime.upstreams[upstream_id]
                await watcher.attach(upstream, upstream.discovered)
        environments = {**self.environments, runtime.snapshot.environment_id: runtime}
        hosts = HostTable.build(environments)
        self.environments, self.hosts = environments, hosts  # the swap
        self.discovery.commit(watchers.values())
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
        discovered = {u for env in self.environments.values() for u in env.discovered}
        await self.discovery.retire(discovered)
        await self.resources.collect()

    def discovered(self, env_id: str) -> dict[str, dict[str, Any]]:
        """The nodes discovery found for each discovered upstream of environment ``env_id``
        (what the node's heartbeat reports), by upstream id."""
        runtime = self.environments.get(env_id)
        if runtime is None:
            return {}
        return {upstream_id: w.report() for upstream_id, w in runtime.discovered.items()}

    async def close(self) -> None:
        await self.discovery.aclose()
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
        if incoming_id and _valid_id(incoming_id):
            request_id = incoming_id
        else:
            request_id = self.request_ids.next()
        responder.tag = (STANDARD_HEADER, request_id)  # on every answer, errors included
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
        # the compiled route itself (Router.build's targets): no read of the route's model
        # nor lookup by its id, which at 10,000 routes were two cache misses a request
        route = cast(RouteRuntime, match.target)
        policy = route.request_ids
        if policy is not None:  # the route's request-id plugin: its header, its algorithm
            request_id = policy.assign(request, responder)
        if route.refused:
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
        ctx.rollup_keys = route.rollup_keys
        if policy is not None:
            ctx.request_id_header = policy.header
            ctx.request_id_in_response = policy.in_response
        if route.access_free:  # (no plugin, or none with an access phase)
            return self._proxy_now(env, route, route.response_phase, route.loggers, ctx, responder)
        access = AccessPhase(route.chain, ctx.consumer)
        pending = access.run(env, ctx)
        if pending is not None:
            return self._handle_later(env, route, ctx, responder, access, pending)
        filters, loggers = access.phases(route)
        if access.reply is not None:
            send_reply(filters, ctx, access.reply, responder)
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
            access.consumer_known(env, ctx)
            pending = access.run(env, ctx)
        filters, loggers = access.phases(route)
        if access.reply is not None:
            send_reply(filters, ctx, access.reply, responder)
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

    def _proxy_now(
        self,
        env: EnvironmentRuntime,
        route: RouteRuntime,
        filters: ResponsePhase,
        loggers: list[PluginRuntime],
        ctx: RequestContext,
        responder: Responder,
    ) -> Coroutine[Any, Any, None] | Taken | None:
        """Forward by callbacks (``forward_now``) a request without a body, or with a small
        one already received, that has an idle pooled connection to its node; anything else
        in a coroutine (``_proxy``)."""
        request = ctx.request
        body = request.body
        payload: bytes | None = None
        by_callbacks = body is EMPTY_BODY
        if not by_callbacks:
            # (most bodies come whole with their head: see http.connection)
            payload = body.peek_complete()
            by_callbacks = payload is not None and len(payload) <= SMALL_BODY
        direct = ctx.direct
        if direct is not None:
            if by_callbacks and direct.keepalive:  # (else a new connection: in the coroutine)
                conn = self.pool.take(direct.address, direct.port, direct.tls, direct.server_name)
                if conn is not None:
                    sent = DirectProxied(self, env, route, filters, loggers, ctx, responder)
                    forwarding = direct_forwarding(ctx, direct, on_response_of(filters, ctx))
                    address = node_address(direct.address, direct.port)
                    forward_now(request, responder, conn, forwarding, address, sent, payload)
                    return TAKEN
            return self._proxy_later(env, route, filters, loggers, ctx, responder, None)
        upstream = route.upstream
        if upstream is None:
            self._no_upstream(ctx, responder)
            self._log(env, ctx, loggers)
            return None
        first: Node | None = None
        if by_callbacks and not request.upgrade:
            balancer = upstream.balancer
            first = balancer.pick(pick_context(ctx, upstream))
            if first is not None:
                balancer.started(first)
                conn = self.pool.take(first.host, first.port, upstream.tls)
                if conn is not None:
                    proxied = Proxied(self, env, route, first, filters, loggers, ctx, responder)
                    forwarding = forwarding_of(ctx, upstream, on_response_of(filters, ctx))
                    forward_now(
                        request, responder, conn, forwarding, first.address, proxied, payload
                    )
                    return TAKEN
        return self._proxy_later(env, route, filters, loggers, ctx, responder, first)

    async def _proxy_later(
        self,
        env: EnvironmentRuntime,
        route: RouteRuntime,
        filters: ResponsePhase,
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

    async def _proxy(
        self,
        route: RouteRuntime,
        filters: ResponsePhase,
        ctx: RequestContext,
        responder: Responder,
        first: Node | None = None,
    ) -> None:
        """Forward in a coroutine; ``first``: the node already picked (and started) for it."""
        if ctx.direct is not None:
            await self._proxy_direct(filters, ctx, responder)
            return
        upstream = route.upstream
        if upstream is None:
            self._no_upstream(ctx, responder)
            return
        request = ctx.request
        pick = pick_context(ctx, upstream)
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

        forwarding = forwarding_of(ctx, upstream, on_response_of(filters, ctx))
        started = _clock()
        result = await forward(request, responder, forwarding, pool=self.pool, targets=next_target)
        account(upstream, tried, ctx, responder, result, _clock() - started)

    async def _proxy_direct(
        self, filters: ResponsePhase, ctx: RequestContext, responder: Responder
    ) -> None:
        """Forward to where a plugin said (``ctx.direct``: ai-proxy's provider) instead of the
        route's upstream, through the same engine; its answer streams through the filters."""
        direct = ctx.direct
        assert direct is not None
        forwarding = direct_forwarding(ctx, direct, on_response_of(filters, ctx))
        result = await forward(
            ctx.request, responder, forwarding, pool=self.pool, targets=OneTarget(direct)
        )
        note_result(ctx, responder, result)


class DirectProxied(Outcome):
    """A request forwarded by callbacks (``forward_now``): its outcome, once known, noted and
    logged as ``_proxy_later`` would (a plain object rather than closures: see
    CONVENTIONS.md "Compiled modules"). As is, a request a plugin sent elsewhere
    (``ctx.direct``); :class:`Proxied` one sent to a node of the route's upstream."""

    __slots__ = (
        "_ctx",
        "_env",
        "_filters",
        "_gateway",
        "_loggers",
        "_node",
        "_responder",
        "_route",
    )

    def __init__(
        self,
        gateway: Gateway,
        env: EnvironmentRuntime,
        route: RouteRuntime,
        filters: ResponsePhase,
        loggers: list[PluginRuntime],
        ctx: RequestContext,
        responder: Responder,
        node: Node | None = None,
    ) -> None:
        self._gateway = gateway
        self._env = env
        self._route = route
        self._filters = filters
        self._loggers = loggers
        self._ctx = ctx
        self._responder = responder
        self._node = node

    def done(self, result: ProxyResult) -> None:
        ctx = self._ctx
        note_result(ctx, self._responder, result)
        self._gateway._log(self._env, ctx, self._loggers)

    def again(self) -> Coroutine[Any, Any, None]:
        """Forward in a coroutine after all (a stale connection), to the same node first."""
        return self._gateway._proxy_later(
            self._env,
            self._route,
            self._filters,
            self._loggers,
            self._ctx,
            self._responder,
            self._node,
        )


class Proxied(DirectProxied):
    """A request forwarded by callbacks to ``node`` of the route's upstream: its outcome also
    accounted to the upstream (passive health, latency)."""

    __slots__ = ("_started",)

    def __init__(
        self,
        gateway: Gateway,
        env: EnvironmentRuntime,
        route: RouteRuntime,
        node: Node,
        filters: ResponsePhase,
        loggers: list[PluginRuntime],
        ctx: RequestContext,
        responder: Responder,
    ) -> None:
        super().__init__(gateway, env, route, filters, loggers, ctx, responder, node)
        self._started = _clock()

    def done(self, result: ProxyResult) -> None:
        elapsed = _clock() - self._started
        upstream = self._route.upstream
        node = self._node
        assert upstream is not None and node is not None
        ctx = self._ctx
        account(upstream, [node], ctx, self._responder, result, elapsed)
        self._gateway._log(self._env, ctx, self._loggers)


__all__ = ["Gateway", "HostTable", "RequestIds", "SnapshotRefused"]
