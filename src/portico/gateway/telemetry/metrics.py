"""The gateway's Prometheus metrics: one registry per gateway process (not prometheus_client's
global one, so a test can build several gateways), served at ``/metrics`` on the status
listener in text format 0.0.4.

Request series are fed by the metrics-export plugin (only requests it is attached to are
counted, as with APISIX's prometheus plugin); the gateway's own state is read at scrape time
whatever the plugins: the config version of each environment, the health of every upstream
node, the nodes discovery found for each discovered upstream (with when it last answered and
how many attempts in a row failed since), and log entries the loggers dropped.

Label cardinality stays bounded: routes and APIs by id (or name, with ``prefer_name``),
consumers by name, the upstream node by address — never a raw path or a client address.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from portico.gateway.discovery.watch import DiscoveredUpstream
    from portico.gateway.health.checker import HealthChecker
    from portico.gateway.snapshot import EnvironmentSnapshot

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
#: APISIX's default latency buckets (1 ms … 60 s), in seconds
LATENCY_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60)
#: labelled children kept for reuse; past this the cache starts over (children stay in the
#: registry, only the lookup cost comes back)
MAX_CACHED_SERIES = 4096

#: (env, api, route, consumer, code, node)
SeriesKey = tuple[str, str, str, str, int, str]


@dataclass(slots=True)
class Series:
    """The labelled children one request updates, looked up once per label set: a
    ``labels(...)`` call costs about 5× an ``inc()`` on a cached child."""

    requests: Counter
    request_latency: Histogram
    upstream_latency: Histogram
    ingress: Counter
    egress: Counter


class ServedEnvironment(Protocol):
    """What the gauges read of an environment the gateway serves (its
    ``EnvironmentRuntime``), declared here: the runtime imports the plugins, which log
    through telemetry, so telemetry does not import the runtime."""

    @property
    def version(self) -> int: ...

    @property
    def snapshot(self) -> EnvironmentSnapshot: ...


class _GatewayState(Collector):
    """Gauges read from the gateway when scraped (nothing to keep in step)."""

    def __init__(self) -> None:
        self.environments: Callable[[], Mapping[str, ServedEnvironment]] = dict
        self.health: Callable[[], Mapping[str, HealthChecker]] = dict
        self.discovery: Callable[[], Mapping[str, DiscoveredUpstream]] = dict

    def describe(self) -> Iterator[Metric]:
        yield from self._families()

    def _families(self) -> tuple[GaugeMetricFamily, ...]:
        return (
            GaugeMetricFamily(
                "portico_config_version",
                "Config snapshot version each environment serves.",
                labels=["env"],
            ),
            GaugeMetricFamily(
                "portico_environment_info",
                "Names of the environments (1 per environment), to join ids to names.",
                labels=["env", "name"],
            ),
            GaugeMetricFamily(
                "portico_upstream_node_healthy",
                "1 while the upstream node is healthy, 0 while it is not.",
                labels=["upstream", "node"],
            ),
            GaugeMetricFamily(
                "portico_upstream_discovered_node",
                "Nodes discovery found for an upstream (1 per node), with their weight and "
                "priority (an SRV record's priority, negated).",
                labels=["upstream", "service", "node", "weight", "priority"],
            ),
            GaugeMetricFamily(
                "portico_upstream_discovery_resolved_timestamp_seconds",
                "When the upstream's discovery last answered with nodes (epoch seconds).",
                labels=["upstream", "service"],
            ),
            GaugeMetricFamily(
                "portico_upstream_discovery_failures",
                "Attempts in a row that gave no node (failed or empty): the last good nodes "
                "keep serving meanwhile.",
                labels=["upstream", "service"],
            ),
        )

    def collect(self) -> Iterator[Metric]:
        version, info, healthy, discovered, resolved, failures = self._families()
        for env_id, runtime in self.environments().items():
            version.add_metric([env_id], runtime.version)
            info.add_metric([env_id, runtime.snapshot.environment_name], 1)
        for upstream_id, checker in self.health().items():
            for node in checker.snapshot()["nodes"]:
                address = f"{node['host']}:{node['port']}"
                healthy.add_metric([upstream_id, address], 1 if node["healthy"] else 0)
        for upstream_id, upstream in self.discovery().items():
            service = f"{upstream.kind}:{upstream.service_name}"
            for found in upstream.nodes:
                labels = [upstream_id, service, found.address, str(found.weight)]
                discovered.add_metric([*labels, str(found.priority)], 1)
            if upstream.resolved_at is not None:
                resolved.add_metric([upstream_id, service], upstream.resolved_at)
            failures.add_metric([upstream_id, service], upstream.failures)
        yield from (version, info, healthy, discovered, resolved, failures)


class GatewayMetrics:
    """The registry and its families; a shared resource (``services.shared("metrics", "")``)
    owned by the gateway, which pre-registers its own so plugins find it."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        labels = ["env", "api", "route", "consumer"]
        self.requests = Counter(
            "portico_http_requests",
            "Requests per environment, API, route, consumer, status and upstream node.",
            [*labels, "code", "node"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "portico_http_latency_seconds",
            "Request latency (type=request: routing to last byte sent; type=upstream: the "
            "upstream exchange).",
            ["type", *labels],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.bandwidth = Counter(
            "portico_bandwidth_bytes",
            "Body bytes received from clients (ingress) and sent to them (egress).",
            ["type", *labels],
            registry=self.registry,
        )
        self.dropped = Counter(
            "portico_log_entries_dropped",
            "Log entries a logger dropped (sink failing or unreachable, queue full).",
            ["plugin"],
            registry=self.registry,
        )
        self._state = _GatewayState()
        self.registry.register(self._state)
        self._series: dict[SeriesKey, Series] = {}

    def watch(
        self,
        environments: Callable[[], Mapping[str, ServedEnvironment]],
        health: Callable[[], Mapping[str, HealthChecker]],
        discovery: Callable[[], Mapping[str, DiscoveredUpstream]] = dict,
    ) -> None:
        """Where the gateway-state gauges are read from at scrape time."""
        self._state.environments = environments
        self._state.health = health
        self._state.discovery = discovery

    def series(self, key: SeriesKey) -> Series:
        found = self._series.get(key)
        if found is not None:
            return found
        env, api, route, consumer, code, node = key
        labels = (env, api, route, consumer)
        found = Series(
            self.requests.labels(*labels, str(code), node),
            self.latency.labels("request", *labels),
            self.latency.labels("upstream", *labels),
            self.bandwidth.labels("ingress", *labels),
            self.bandwidth.labels("egress", *labels),
        )
        if len(self._series) >= MAX_CACHED_SERIES:
            self._series.clear()
        self._series[key] = found
        return found

    def dropped_counter(self, plugin: str) -> Callable[[int], None]:
        child = self.dropped.labels(plugin)

        def count(entries: int) -> None:
            child.inc(entries)

        return count

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    async def aclose(self) -> None:
        """The gateway owns the registry: series survive every configuration swap."""
        return None
