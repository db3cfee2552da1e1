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
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import parse_qs

from portico.gateway.balancer import Node, PickContext
from portico.gateway.client_address import ClientAddress
from portico.gateway.config import (
    Chain,
    EnvironmentRuntime,
    HealthRegistry,
    RouteRuntime,
    SnapshotRefused,
    UpstreamRuntime,
    build_environment,
)
from portico.gateway.context import (
    PluginRuntime,
    Reply,
    RequestContext,
    ResponseHeaders,
    phase_plugins,
)
from portico.gateway.counters import LocalCounters
from portico.gateway.http.proxy import BodyTransform, forward
from portico.gateway.http.server import Request, Responder
from portico.gateway.http.upstream import UpstreamPool, UpstreamResponse
from portico.gateway.metrics import GatewayMetrics
from portico.gateway.options import GatewayOptions
from portico.gateway.paths import PathRejected, normalize_path
from portico.gateway.resources import SharedResources
from portico.gateway.sealing import secret_box
from portico.gateway.services import ConsumerIndex, RuntimeServices

logger: Final = logging.getLogger("portico.gateway")

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

    async def handle(self, request: Request, responder: Responder) -> None:
        incoming_id = request.request_id
        if incoming_id and _REQUEST_ID.match(incoming_id):
            request_id = incoming_id
        else:
            request_id = self.request_ids.next()
        responder.tag = ("x-request-id", request_id)  # on every answer, errors included
        host, env_id = self.hosts.lookup(request.host)
        if env_id is None:
            responder.send(404, JSON, error_body("404 Route Not Found"))
            return
        env = self.environments[env_id]
        try:
            path = normalize_path(request.path)
        except PathRejected:
            responder.send(400, JSON, error_body("400 Bad Request: invalid path"))
            return
        match = env.router.match(request.method, host, path)
        if match is None:
            responder.send(404, JSON, error_body("404 Route Not Found"))
            return
        route = env.routes[match.route.id]
        if route.unsupported:
            message = f"503 plugin {route.unsupported[0]} is not supported by this gateway"
            responder.send(503, JSON, error_body(message))
            return
        ctx = RequestContext(
            request,
            match.route,
            match.params,
            path,
            host,
            self.client_address.of(request),
            request_id,
            time.perf_counter(),
        )
        chain = route.chain
        reply = None
        filters, loggers = route.header_filters, route.loggers
        if chain:
            reply, effective = await self._access(env, chain, ctx)
            if effective is not chain:  # the consumer's plugins replaced some
                filters, loggers = phase_plugins(plugin for _, plugin in effective)
        if reply is not None:
            await self._reply(filters, ctx, reply, responder)
        else:
            await self._proxy(route, filters, ctx, responder)
        ctx.finished = time.perf_counter()
        for plugin in loggers:
            plugin.log(ctx)
        for observe in self.observers:
            observe(env, ctx)

    async def _access(
        self, env: EnvironmentRuntime, chain: Chain, ctx: RequestContext
    ) -> tuple[Reply | None, Chain]:
        """Run the access phase; returns a plugin's reply (or None) and the chain whose
        header, body and log phases run. Once an authentication plugin names the consumer,
        the consumer's own plugins REPLACE same-named ones for the rest of the chain (the
        consumer scope is the narrowest). A reply ends the access phase only: as in APISIX,
        every plugin of the chain still sees the response and logs it (CORS headers on a 401,
        the 401 in the metrics)."""
        consumer = ctx.consumer
        index = 0
        while index < len(chain):
            attachment, plugin = chain[index]
            index += 1
            verdict = plugin.access(ctx)
            reply = verdict if verdict is None or isinstance(verdict, Reply) else await verdict
            if reply is not None:
                return reply, chain
            if ctx.consumer is not consumer and ctx.consumer is not None:
                consumer = ctx.consumer
                own = env.consumer_chains.get(consumer.username)
                if own:
                    names = {a.name for a, _ in own} | {attachment.name}
                    kept = [item for item in chain[index:] if item[0].name not in names]
                    rest = sorted(kept + own, key=lambda item: (item[0].order, item[0].name))
                    chain = chain[:index] + rest  # a new list: the route's is shared
        return None, chain

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
            merged: list[tuple[str, str]] = []
            replaced: set[str] = set()
            for name, value in added.items():
                name = name.lower()
                replaced.add(name)
                merged.append((name, value))
            if lower_case:
                kept = [h for h in headers if h[0] not in replaced]
            else:
                kept = [h for h in headers if h[0].lower() not in replaced]
            kept.extend(merged)
            return kept
        seen = ResponseHeaders(headers, lower_case=lower_case)
        if added:
            seen.update(added)
        for plugin in filters:
            plugin.header_filter(ctx, status, seen)
        seen["x-request-id"] = ctx.request_id
        return seen.items()

    async def _reply(
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

    async def _proxy(
        self,
        route: RouteRuntime,
        filters: list[PluginRuntime],
        ctx: RequestContext,
        responder: Responder,
    ) -> None:
        upstream = route.upstream
        if upstream is None:
            ctx.status = 502
            responder.send(502, JSON, error_body("502 Bad Gateway: no upstream"))
            return
        request = ctx.request
        if upstream.hashed:  # only a hash key reads headers, arguments and variables
            pick = PickContext(
                client_ip=ctx.client_ip,
                headers=dict(request.headers),
                args={k: v[0] for k, v in parse_qs(request.query).items()},
                consumer=ctx.consumer.username if ctx.consumer else None,
                vars={"uri": ctx.path, "host": ctx.host, "remote_addr": ctx.client_ip},
            )
        else:
            pick = _NO_PICK_CONTEXT
        tried: list[Node] = []
        balancer = upstream.balancer

        def next_target() -> Node | None:
            node = balancer.pick(pick, exclude=tried)
            if node is not None:
                tried.append(node)
                balancer.started(node)
            return node

        removed = ctx._remove_upstream_headers
        if removed:
            request.headers = [(k, v) for k, v in request.headers if k not in removed]
        extra = [("x-request-id", ctx.request_id)]
        if ctx._upstream_headers:
            extra += [(k, v) for k, v in ctx._upstream_headers.items() if k != "host"]

        def on_response(
            response: UpstreamResponse, headers: list[tuple[str, str]]
        ) -> tuple[list[tuple[str, str]], BodyTransform | None]:
            ctx.status = response.status
            if not filters and not ctx._response_headers:
                return headers, None  # nothing rewrites the answer (the responder tags it)
            out = self._filter_headers(filters, ctx, response.status, headers, lower_case=True)
            # a header filter may change the status the client gets (response-rewrite); the
            # proxy sends response.status, and judges the node by the status it answered
            response.status = ctx.status
            return out, body_transform(ctx) if ctx._body_filters else None

        started = time.perf_counter()
        result = await forward(
            request,
            responder,
            pool=self.pool,
            targets=next_target,
            path=ctx.upstream_path or ctx.path,
            host_header=self._upstream_host(ctx, upstream),
            extra_headers=extra,
            timeouts=upstream.timeouts,
            retries=upstream.retries,
            tls=upstream.tls,
            on_response=on_response,
        )
        ctx.status = responder.status or result.status  # what the client got (0: nothing sent)
        ctx.proxied = result.error_kind is None
        ctx.upstream_seconds = result.upstream_seconds
        ctx.upstream_addr = result.upstream_addr
        ctx.request_bytes = result.request_bytes
        ctx.response_bytes = result.response_bytes
        elapsed = time.perf_counter() - started
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


__all__ = ["Gateway", "SnapshotRefused"]
