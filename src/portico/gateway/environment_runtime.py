"""An environment's snapshot turned into what serves requests: router, plugin chains,
balancers. Built off the hot path, whole or not at all; the gateway swaps the reference in
one assignment, so in-flight requests finish on the configuration they started with.

An upstream with ``discovery`` is built with the nodes its watcher last found
(``gateway/discovery/watch.py``); each later change of them comes to
:meth:`UpstreamRuntime.use_nodes`, which swaps in a balancer over the new nodes (one
assignment: a request reads ``upstream.balancer`` once per pick, exactly as for a static
upstream) and tells the health checker, so nodes that stayed keep their health and their
balancing figures.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from portico.gateway.balancing.balancer import Balancer, BalancerBuild
from portico.gateway.balancing.nodes import Node
from portico.gateway.context import (
    BasePluginRuntime,
    PluginRuntime,
    Reply,
    RequestContext,
    ResponsePhase,
    access_free,
    phase_plugins,
)
from portico.gateway.discovery.watch import DiscoveredUpstream, Discovery
from portico.gateway.health.checker import HealthChecker
from portico.gateway.http.proxy import node_address
from portico.gateway.http.upstream import Timeouts
from portico.gateway.plugin_services import ConsumerIndex, RuntimeServices
from portico.gateway.plugins.registry import PLUGINS, check_plugin, conflicting
from portico.gateway.request_ids import RequestIdPolicy
from portico.gateway.route_keys import NO_ROUTE_KEYS, RouteKeys
from portico.gateway.routing.router import Router
from portico.gateway.snapshot import (
    EnvironmentSnapshot,
    PluginAttachment,
    SnapshotConsumer,
    SnapshotRoute,
    SnapshotUpstream,
)

logger = logging.getLogger("portico.gateway.config")

Chain = list[tuple[PluginAttachment, PluginRuntime]]


class SnapshotRefused(Exception):
    """The snapshot cannot be served; the previous configuration keeps serving."""


@dataclass
class UpstreamRuntime:
    upstream: SnapshotUpstream
    balancer: Balancer
    health: HealthChecker
    # What the proxy needs per request, read from the specification once per snapshot
    timeouts: Timeouts = field(default_factory=Timeouts)
    tls: bool = False
    hashed: bool = False  # chash: the balancer reads headers, arguments and variables
    retries: int = 0
    host_mode: str = "pass"  # passHost: pass | rewrite | node
    fixed_host: str | None = None  # the Host header for rewrite and node
    #: discovery: the nodes the balancer was built with (empty for listed nodes)
    discovered: tuple[Node, ...] = ()
    #: discovery: calls of use_nodes so far (a later one supersedes one still building)
    nodes_calls: int = 0

    @property
    def specification(self) -> Mapping[str, Any]:
        return self.upstream.specification

    @classmethod
    def build(
        cls,
        upstream: SnapshotUpstream,
        balancer: Balancer,
        health: HealthChecker,
        discovered: tuple[Node, ...] | None = None,
    ) -> UpstreamRuntime:
        """``discovered``: the nodes of an upstream with discovery, found so far."""
        spec = upstream.specification
        timeout = spec.get("timeout") or {}
        nodes = spec.get("nodes") or []
        if discovered is not None:
            nodes = [{"host": n.host, "port": n.port} for n in discovered]
        retries = spec.get("retries")
        mode = str(spec.get("passHost", "pass"))
        fixed: str | None = None
        if mode == "rewrite" and spec.get("upstreamHost"):
            fixed = str(spec["upstreamHost"])
        elif mode == "node" and isinstance(nodes, list) and nodes and isinstance(nodes[0], dict):
            fixed = node_address(str(nodes[0]["host"]), int(nodes[0]["port"]))
        return cls(
            upstream,
            balancer,
            health,
            timeouts=Timeouts(
                connect=float(timeout.get("connect", 60)),
                send=float(timeout.get("send", 60)),
                read=float(timeout.get("read", 60)),
            ),
            tls=spec.get("scheme") == "https",
            hashed=spec.get("type") == "chash",
            retries=max(0, len(nodes) - 1) if retries is None else int(retries),
            host_mode=mode,
            fixed_host=fixed,
            discovered=discovered or (),
        )

    async def use_nodes(
        self, nodes: tuple[Node, ...], pause: Callable[[], Awaitable[None]]
    ) -> None:
        """Discovery found these nodes: balance over them from the next pick on (figures of
        the nodes that stayed carried over), and have the health checker probe them (those
        that stayed keep their state). Done in steps on the event loop, ``await pause()``
        before each (a ``chash`` ring is many); a later call supersedes this one if it
        comes before this one's balancer is made."""
        self.nodes_calls += 1
        call = self.nodes_calls
        spec = self.upstream.specification
        await pause()
        build = BalancerBuild(spec, self.health, nodes)
        while not build.done:
            await pause()
            build.step()
        await pause()
        if call != self.nodes_calls:
            return
        self.balancer = build.balancer(previous=self.balancer)
        if spec.get("retries") is None:
            self.retries = max(0, len(nodes) - 1)
        if self.host_mode == "node":
            self.fixed_host = nodes[0].address if nodes else None
        self.discovered = nodes
        await self.health.follow_nodes(nodes, pause)


@dataclass
class RouteRuntime:
    route: SnapshotRoute
    chain: Chain
    upstream: UpstreamRuntime | None
    #: plugins attached that this gateway cannot run: the route refuses traffic (fail closed)
    unsupported: list[str] = field(default_factory=list)
    #: the chain's plugins that have a response (header filter) and a log phase
    response_phase: ResponsePhase = field(default_factory=ResponsePhase)
    loggers: list[PluginRuntime] = field(default_factory=list)
    #: what telemetry rolls this route's requests up by (``RequestContext.rollup_keys``)
    rollup_keys: RouteKeys = NO_ROUTE_KEYS
    #: how its requests get their id (its request-id plugin), None: the gateway's own way
    request_ids: RequestIdPolicy | None = None
    #: no plugin of the chain does anything in the access phase (none, or only loggers that
    #: log no body): the request is proxied without one
    access_free: bool = True
    #: some plugin is ``unsupported`` (read per request: a field of this object, where the
    #: list was one more cache miss at 10,000 routes)
    refused: bool = False

    def __post_init__(self) -> None:
        self.response_phase, self.loggers = phase_plugins(p for _, p in self.chain)
        self.access_free = access_free(p for _, p in self.chain)
        self.refused = bool(self.unsupported)
        for _, plugin in self.chain:
            policy = plugin.request_ids()
            if policy is not None:
                self.request_ids = policy


@dataclass
class EnvironmentRuntime:
    snapshot: EnvironmentSnapshot
    router: Router
    routes: dict[str, RouteRuntime]
    upstreams: dict[str, UpstreamRuntime]
    services: RuntimeServices
    consumer_chains: dict[str, Chain]
    #: upstream id → the watcher of each upstream with discovery
    discovered: dict[str, DiscoveredUpstream] = field(default_factory=dict)

    @property
    def version(self) -> int:
        return self.snapshot.version


class HealthRegistry:
    """Health checkers outlive snapshots while their upstream's specification is unchanged, so
    a deploy elsewhere does not reset what the checkers learnt."""

    def __init__(self) -> None:
        self._checkers: dict[str, HealthChecker] = {}
        self._replaced: list[HealthChecker] = []

    def checker(
        self, upstream: SnapshotUpstream, nodes: tuple[Node, ...] | None = None
    ) -> tuple[HealthChecker, bool]:
        """The upstream's checker, kept while its checks and node addresses (or its
        discovery) are unchanged (a new weight or balancing type does not throw away what it
        learnt). ``nodes``: a new checker's, for an upstream with discovery."""
        known = self._checkers.get(upstream.id)
        if known is not None and known.matches(upstream.specification):
            return known, False
        if known is not None:
            self._replaced.append(known)  # stopped by the next retire()
        checker = HealthChecker(upstream.id, upstream.specification, nodes=nodes)
        self._checkers[upstream.id] = checker
        return checker, True

    async def retire(self, keep: set[str]) -> None:
        """Stop checkers of upstreams no longer used (or replaced)."""
        while self._replaced:
            await self._replaced.pop().stop()
        for upstream_id in list(self._checkers):
            if upstream_id not in keep:
                await self._checkers.pop(upstream_id).stop()

    def live(self) -> dict[str, HealthChecker]:
        return dict(self._checkers)


def build_chain(
    attachments: list[PluginAttachment], services: RuntimeServices
) -> tuple[Chain, list[str]]:
    chain: Chain = []
    unsupported: list[str] = []
    for attachment in sorted(attachments, key=lambda a: (a.order, a.name)):
        spec = PLUGINS.get(attachment.name)
        if spec is None or spec.runtime is None:
            unsupported.append(attachment.name)
            continue
        _, config = check_plugin(attachment.name, attachment.config)
        chain.append((attachment, spec.runtime(config, services)))
    return chain, unsupported


class Unsupported(BasePluginRuntime):
    """Stands in a consumer's chain for one of its plugins that this gateway cannot run: the
    consumer's requests are refused (503), never proxied without the plugin (fail closed, as
    a route with such a plugin is). The management service refuses such plugins; this is
    defence in depth."""

    def __init__(self, name: str) -> None:
        message = f"503 plugin {name} is not supported by this gateway"
        self.body = json.dumps({"error_msg": message}).encode()

    def access(self, ctx: RequestContext) -> Reply | None:
        return Reply(503, self.body, [("content-type", "application/json")])


def consumer_chain(consumer: SnapshotConsumer, services: RuntimeServices) -> Chain:
    """A consumer's own plugins, those this gateway cannot run included, as refusals."""
    chain, unsupported = build_chain(consumer.plugins, services)
    if not unsupported:
        return chain
    logger.warning(
        "consumer %s has plugins this gateway cannot run; its requests answer 503",
        consumer.username,
        extra={"plugins": unsupported},
    )
    for attachment in consumer.plugins:
        if attachment.name in unsupported:
            chain.append((attachment, Unsupported(attachment.name)))
    return sorted(chain, key=lambda item: (item[0].order, item[0].name))


def build_environment(
    document: Mapping[str, Any],
    *,
    services: Callable[[str, ConsumerIndex], RuntimeServices],
    health: HealthRegistry,
    discovery: Discovery | None = None,
) -> tuple[EnvironmentRuntime, list[HealthChecker]]:
    """A runtime for ``document``, or :class:`SnapshotRefused`. ``services`` makes what the
    plugin runtimes of one environment share. Returns the health checkers that are new (the
    caller starts them once the runtime is in service). Upstreams with discovery get the
    nodes ``discovery`` knows for them; their watchers are in ``runtime.discovered`` (the
    caller attaches them to their upstreams and commits them once in service)."""
    try:
        snapshot = EnvironmentSnapshot.model_validate(document)
        consumers = ConsumerIndex.build(snapshot.consumers, snapshot.products)
        shared = services(snapshot.environment_id, consumers)
        fresh: list[HealthChecker] = []
        upstreams: dict[str, UpstreamRuntime] = {}
        discovered: dict[str, DiscoveredUpstream] = {}
        for upstream_id, upstream in snapshot.upstreams.items():
            found: tuple[Node, ...] | None = None
            spec_discovery = upstream.specification.get("discovery")
            if spec_discovery and not upstream.specification.get("nodes"):
                if discovery is None:
                    raise SnapshotRefused(f"upstream {upstream.name} needs discovery")
                try:
                    watcher = discovery.candidate(upstream.id, spec_discovery)
                except ValueError as error:  # a source this gateway lacks (a newer control
                    # plane's): that upstream has no node (503), the rest of the snapshot serves
                    logger.warning("upstream %s cannot be discovered: %s", upstream.name, error)
                    found = ()
                else:
                    discovered[upstream_id] = watcher
                    found = watcher.nodes
            checker, new = health.checker(upstream, found)
            if new:
                fresh.append(checker)
            balancer = Balancer.build(upstream.specification, checker, nodes=found)
            upstreams[upstream_id] = UpstreamRuntime.build(upstream, balancer, checker, found)
        routes: dict[str, RouteRuntime] = {}
        for route in snapshot.routes:
            pair = conflicting(attachment.name for attachment in route.plugins)
            if pair is not None:  # (deploys refuse it: defence in depth)
                raise SnapshotRefused(f"route {route.id}: plugins {pair[0]} and {pair[1]} conflict")
            chain, unsupported = build_chain(route.plugins, shared)
            if unsupported:
                logger.warning(
                    "route %s has plugins this gateway cannot run; it answers 503",
                    route.id,
                    extra={"plugins": unsupported},
                )
            routes[route.id] = RouteRuntime(
                route,
                chain,
                upstreams.get(route.upstream_id),
                unsupported,
                rollup_keys=RouteKeys(snapshot.environment_id, route.api_id, route.id),
            )
        consumer_chains = {c.username: consumer_chain(c, shared) for c in snapshot.consumers}
        router = Router.build(snapshot.routes, routes)
    except SnapshotRefused:
        raise
    except Exception as error:  # any defect makes the whole snapshot unusable
        raise SnapshotRefused(f"{type(error).__name__}: {error}") from error
    runtime = EnvironmentRuntime(
        snapshot, router, routes, upstreams, shared, consumer_chains, discovered
    )
    return runtime, fresh
