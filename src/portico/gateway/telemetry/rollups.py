"""Telemetry: every request that reached a route becomes a record, folded at once into
per-minute rollups held in memory and shipped to the control plane in batches.

Folding at the node (as Kong's vitals do) keeps the cost per request to one dict lookup, a
few additions and five sketch bins (latency, upstream latency, request, response and total
size: one logarithm and one dict increment each), and makes what travels and what the
control plane writes proportional to the number of distinct (minute, API, route, consumer,
method, status, app, product, developer) keys, not to traffic. Names (API, route, app,
developer, product) are read from the snapshot when a key is first seen and travel with it,
so the control plane stores them beside the ids and they outlive the entities.

Nothing here blocks a request. Memory is bounded: at most ``max_keys`` rollups wait; records
that would need a new key beyond that are dropped and counted. A failed shipment is merged
back and retried on the next tick (under the same bound). The count of dropped records travels
with the next batch the control plane accepts, which stores it: loss is counted, never silent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, cast

if TYPE_CHECKING:
    from portico.gateway.context import RequestContext
    from portico.gateway.snapshot import SnapshotRoute

logger = logging.getLogger("portico.gateway.telemetry")

# ---------------------------------------------------------------------------- sketches
#
# Percentiles come from a DDSketch-style histogram: a value x > 0 falls into bin
# ceil(log_gamma(x)) with gamma = (1 + a) / (1 - a), so every value of a bin is within a
# relative a (1 %) of the bin's representative value. Merging two sketches adds their bin
# counts, so rollups of several requests, nodes, minutes or hours merge exactly as their
# counters do. The same mapping serves milliseconds and bytes: bins are shifted by
# SKETCH_OFFSET so that 0.001 (a microsecond, or less than a byte) lands at 1, and bin 0
# holds everything smaller (zero-length bodies). SKETCH_MAX_INDEX (about 10^12) is the last.

#: the relative accuracy of a percentile
SKETCH_ACCURACY: Final = 0.01
SKETCH_GAMMA: Final = (1.0 + SKETCH_ACCURACY) / (1.0 - SKETCH_ACCURACY)
_INV_LN_GAMMA: Final = 1.0 / math.log(SKETCH_GAMMA)
#: values below it count in bin 0 (and read back as 0)
SKETCH_MIN_VALUE: Final = 0.001
SKETCH_OFFSET: Final = 347
SKETCH_MAX_INDEX: Final = 1730
_log: Final = math.log
_ceil: Final = math.ceil


def sketch_index(value: float) -> int:
    """The bin of ``value`` (milliseconds or bytes)."""
    if value < SKETCH_MIN_VALUE:
        return 0
    index = int(_ceil(_log(value) * _INV_LN_GAMMA)) + SKETCH_OFFSET
    return index if index < SKETCH_MAX_INDEX else SKETCH_MAX_INDEX


def sketch_value(index: int) -> float:
    """The representative value of bin ``index``: within SKETCH_ACCURACY of all it holds."""
    if index <= 0:
        return 0.0
    return 2.0 * SKETCH_GAMMA ** (index - SKETCH_OFFSET) / (SKETCH_GAMMA + 1.0)


def _merge_sketch(into: dict[int, int], other: dict[int, int]) -> None:
    for index, count in other.items():
        into[index] = into.get(index, 0) + count


# A rollup's five sketches share one dict of bins, keyed ``kind + index`` (a kind per sketch,
# SKETCH_STRIDE apart): a request counts in four or five of them, and with thousands of
# routes each rollup it touches is cold in the cache, where one dict is fewer lines to bring
# in than five (measured at 10,000 routes).
SKETCH_STRIDE: Final = 2048  # > SKETCH_MAX_INDEX
LATENCY: Final = 0
UPSTREAM: Final = SKETCH_STRIDE
REQUEST: Final = 2 * SKETCH_STRIDE
RESPONSE: Final = 3 * SKETCH_STRIDE
TRANSFER: Final = 4 * SKETCH_STRIDE


def _count(bins: dict[int, int], kind: int, value: float) -> None:
    key = kind + sketch_index(value)
    bins[key] = bins.get(key, 0) + 1


def _sketch_of(bins: dict[int, int], kind: int) -> dict[int, int]:
    return {key - kind: count for key, count in bins.items() if kind <= key < kind + SKETCH_STRIDE}


# ---------------------------------------------------------------------------- rollups

#: (environment id, minute as epoch seconds, api id, route id, consumer, method, status,
#: app id, product id, developer id): '' where the request had none
RollupKey = tuple[str, int, str, str, str, str, int, str, str, str]

#: names that go with a key's ids, taken when the key is first seen (see ``labels_of``):
#: (api name, route name, route uri, upstream path, app name, developer email, product name)
Labels = tuple[str, str, str, str, str, str, str]

_NO_LABELS: Final[Labels] = ("", "", "", "", "", "", "")


class Rollup:
    """What the requests of one key add up to. ``*_min``/``*_max`` are meaningful once the
    matching count is positive (upstream measures: ``upstream_requests``)."""

    __slots__ = (
        "bins",
        "labels",
        "latency_ms_max",
        "latency_ms_min",
        "latency_ms_sum",
        "request_bytes",
        "request_bytes_max",
        "request_bytes_min",
        "requests",
        "response_bytes",
        "response_bytes_max",
        "response_bytes_min",
        "transfer_bytes_max",
        "transfer_bytes_min",
        "upstream_ms_max",
        "upstream_ms_min",
        "upstream_ms_sum",
        "upstream_requests",
    )

    def __init__(self, labels: Labels = _NO_LABELS) -> None:
        self.labels = labels
        self.requests = 0
        self.latency_ms_sum = 0.0
        self.latency_ms_min = 0.0
        self.latency_ms_max = 0.0
        self.upstream_requests = 0
        self.upstream_ms_sum = 0.0
        self.upstream_ms_min = 0.0
        self.upstream_ms_max = 0.0
        self.request_bytes = 0
        self.request_bytes_min = 0
        self.request_bytes_max = 0
        self.response_bytes = 0
        self.response_bytes_min = 0
        self.response_bytes_max = 0
        self.transfer_bytes_min = 0
        self.transfer_bytes_max = 0
        #: the five sketches' bins (see SKETCH_STRIDE), read through the properties below
        self.bins: dict[int, int] = {}

    @property
    def latency_sketch(self) -> dict[int, int]:
        return _sketch_of(self.bins, LATENCY)

    @property
    def upstream_sketch(self) -> dict[int, int]:
        return _sketch_of(self.bins, UPSTREAM)

    @property
    def request_sketch(self) -> dict[int, int]:
        return _sketch_of(self.bins, REQUEST)

    @property
    def response_sketch(self) -> dict[int, int]:
        return _sketch_of(self.bins, RESPONSE)

    @property
    def transfer_sketch(self) -> dict[int, int]:
        return _sketch_of(self.bins, TRANSFER)

    def add(
        self, latency_ms: float, upstream_ms: float, request_bytes: int, response_bytes: int
    ) -> None:
        """One request; ``upstream_ms`` < 0: it was not proxied."""
        transfer = request_bytes + response_bytes
        if self.requests == 0:
            self.latency_ms_min = self.latency_ms_max = latency_ms
            self.request_bytes_min = self.request_bytes_max = request_bytes
            self.response_bytes_min = self.response_bytes_max = response_bytes
            self.transfer_bytes_min = self.transfer_bytes_max = transfer
        else:
            if latency_ms < self.latency_ms_min:
                self.latency_ms_min = latency_ms
            elif latency_ms > self.latency_ms_max:
                self.latency_ms_max = latency_ms
            if request_bytes < self.request_bytes_min:
                self.request_bytes_min = request_bytes
            elif request_bytes > self.request_bytes_max:
                self.request_bytes_max = request_bytes
            if response_bytes < self.response_bytes_min:
                self.response_bytes_min = response_bytes
            elif response_bytes > self.response_bytes_max:
                self.response_bytes_max = response_bytes
            if transfer < self.transfer_bytes_min:
                self.transfer_bytes_min = transfer
            elif transfer > self.transfer_bytes_max:
                self.transfer_bytes_max = transfer
        self.requests += 1
        self.latency_ms_sum += latency_ms
        self.request_bytes += request_bytes
        self.response_bytes += response_bytes
        bins = self.bins
        _count(bins, LATENCY, latency_ms)
        response = sketch_index(response_bytes)
        key = RESPONSE + response
        bins[key] = bins.get(key, 0) + 1
        # most requests have no body: their total is their response, one logarithm less
        key = TRANSFER + (response if request_bytes == 0 else sketch_index(transfer))
        bins[key] = bins.get(key, 0) + 1
        _count(bins, REQUEST, request_bytes)
        if upstream_ms >= 0.0:
            if self.upstream_requests == 0:
                self.upstream_ms_min = self.upstream_ms_max = upstream_ms
            elif upstream_ms < self.upstream_ms_min:
                self.upstream_ms_min = upstream_ms
            elif upstream_ms > self.upstream_ms_max:
                self.upstream_ms_max = upstream_ms
            self.upstream_requests += 1
            self.upstream_ms_sum += upstream_ms
            _count(bins, UPSTREAM, upstream_ms)

    def merge(self, other: Rollup) -> None:
        if other.requests == 0:
            return
        if self.requests == 0:
            self.latency_ms_min = other.latency_ms_min
            self.request_bytes_min = other.request_bytes_min
            self.response_bytes_min = other.response_bytes_min
            self.transfer_bytes_min = other.transfer_bytes_min
        else:
            self.latency_ms_min = min(self.latency_ms_min, other.latency_ms_min)
            self.request_bytes_min = min(self.request_bytes_min, other.request_bytes_min)
            self.response_bytes_min = min(self.response_bytes_min, other.response_bytes_min)
            self.transfer_bytes_min = min(self.transfer_bytes_min, other.transfer_bytes_min)
        self.latency_ms_max = max(self.latency_ms_max, other.latency_ms_max)
        self.request_bytes_max = max(self.request_bytes_max, other.request_bytes_max)
        self.response_bytes_max = max(self.response_bytes_max, other.response_bytes_max)
        self.transfer_bytes_max = max(self.transfer_bytes_max, other.transfer_bytes_max)
        if other.upstream_requests:
            if self.upstream_requests == 0:
                self.upstream_ms_min = other.upstream_ms_min
                self.upstream_ms_max = other.upstream_ms_max
            else:
                self.upstream_ms_min = min(self.upstream_ms_min, other.upstream_ms_min)
                self.upstream_ms_max = max(self.upstream_ms_max, other.upstream_ms_max)
        self.requests += other.requests
        self.latency_ms_sum += other.latency_ms_sum
        self.upstream_requests += other.upstream_requests
        self.upstream_ms_sum += other.upstream_ms_sum
        self.request_bytes += other.request_bytes
        self.response_bytes += other.response_bytes
        _merge_sketch(self.bins, other.bins)


def sketch_text(sketch: dict[int, int]) -> str:
    """The wire form of a sketch: ``bin=count`` pairs, comma-separated, bins ascending (one
    string to validate, not a list of lists)."""
    pieces: list[str] = []
    for index in sorted(sketch):
        pieces.append(str(index))
        pieces.append("=")
        pieces.append(str(sketch[index]))
        pieces.append(",")
    if pieces:
        pieces.pop()
    return "".join(pieces)


def upstream_path_of(route: SnapshotRoute) -> str:
    """The path template the upstream receives: proxy-rewrite's ``uri`` (or its
    ``regex_uri`` replacement) when the route has one, else the route's own uri. A template,
    never a request's path, so the number of distinct values stays that of routes."""
    for attachment in route.plugins:
        if attachment.name == "proxy-rewrite":
            uri = attachment.config.get("uri")
            if isinstance(uri, str) and uri:
                return uri
            regex = attachment.config.get("regex_uri")
            if isinstance(regex, list) and len(regex) == 2 and isinstance(regex[1], str):
                return str(regex[1])
    return str(route.uri)


def labels_of(ctx: RequestContext) -> Labels:
    """The names that go with a new key (read once per key, not per request)."""
    route = ctx.route
    app_name = ""
    developer_email = ""
    consumer = ctx.consumer
    if consumer is not None and consumer.app is not None:
        app_name = consumer.app.name
        developer_email = consumer.app.developer_email
    product = ctx.product
    product_name = product.name if product is not None else ""
    return (
        route.api_name,
        route.name,
        route.uri,
        upstream_path_of(route),
        app_name,
        developer_email,
        product_name,
    )


class Batch:
    __slots__ = ("dropped", "rollups")

    def __init__(self, rollups: dict[RollupKey, Rollup], dropped: dict[str, int]) -> None:
        self.rollups = rollups
        #: records lost per environment id
        self.dropped = dropped

    def environments(self) -> set[str]:
        return {key[0] for key in self.rollups} | {e for e, n in self.dropped.items() if n}

    def documents(self, environment_id: str) -> list[dict[str, Any]]:
        """The environment's rollups in the wire form of ``/api/dataplane/v1/telemetry``."""
        out = []
        for key, rollup in self.rollups.items():
            env_id, minute, api_id, route_id, consumer, method, status = key[:7]
            app_id, product_id, developer_id = key[7:]
            if env_id != environment_id:
                continue
            labels = rollup.labels
            out.append(
                {
                    "minute": datetime.fromtimestamp(minute, UTC).isoformat(),
                    "apiId": api_id,
                    "routeId": route_id,
                    "consumer": consumer,
                    "method": method,
                    "status": status,
                    "appId": app_id,
                    "productId": product_id,
                    "developerId": developer_id,
                    "apiName": labels[0],
                    "routeName": labels[1],
                    "apiPath": labels[2],
                    "upstreamPath": labels[3],
                    "appName": labels[4],
                    "developerEmail": labels[5],
                    "productName": labels[6],
                    "requests": rollup.requests,
                    "latencyMsSum": round(rollup.latency_ms_sum, 3),
                    "latencyMsMin": round(rollup.latency_ms_min, 3),
                    "latencyMsMax": round(rollup.latency_ms_max, 3),
                    "upstreamRequests": rollup.upstream_requests,
                    "upstreamMsSum": round(rollup.upstream_ms_sum, 3),
                    "upstreamMsMin": round(rollup.upstream_ms_min, 3),
                    "upstreamMsMax": round(rollup.upstream_ms_max, 3),
                    "requestBytes": rollup.request_bytes,
                    "requestBytesMin": rollup.request_bytes_min,
                    "requestBytesMax": rollup.request_bytes_max,
                    "responseBytes": rollup.response_bytes,
                    "responseBytesMin": rollup.response_bytes_min,
                    "responseBytesMax": rollup.response_bytes_max,
                    "transferBytesMin": rollup.transfer_bytes_min,
                    "transferBytesMax": rollup.transfer_bytes_max,
                    "latencySketch": sketch_text(rollup.latency_sketch),
                    "upstreamSketch": sketch_text(rollup.upstream_sketch),
                    "requestSketch": sketch_text(rollup.request_sketch),
                    "responseSketch": sketch_text(rollup.response_sketch),
                    "transferSketch": sketch_text(rollup.transfer_sketch),
                }
            )
        return out


#: ships one batch; raises (anything) when the control plane did not take it. A sink that
#: delivered part of the batch removes that part from it before raising.
Sink = Callable[[Batch], Awaitable[None]]


class TelemetryRecorder:
    """Folds requests into rollups (``observe`` is a ``Gateway`` observer) and ships them."""

    def __init__(
        self,
        sink: Sink,
        *,
        interval: float = 5.0,
        max_keys: int = 50_000,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.sink = sink
        self.interval = interval
        self.max_keys = max_keys
        self.now = now
        self.pending: dict[RollupKey, Rollup] = {}
        self.dropped: dict[str, int] = {}  # records lost, not yet reported, per environment
        self.dropped_total = 0  # since start, for /metrics
        self.shipped_batches = 0
        #: bumped whenever ``pending`` is replaced: what a ``RouteKeys`` remembers of the
        #: one before is stale
        self.generation = 0
        self._task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ hot path

    def observe(self, env: object, ctx: RequestContext) -> None:
        # (a ``Gateway`` observer: the environment is not read, what a request rolls up by is
        # on its context; typed ``object`` so that telemetry does not import the runtime,
        # which imports the plugins, which log through telemetry)
        keys = ctx.rollup_keys
        consumer = ctx.consumer
        username = ""
        app_id = ""
        developer_id = ""
        if consumer is not None:
            username = consumer.username
            app = consumer.app
            if app is not None:
                app_id = app.id
                developer_id = app.developer_id
        product = ctx.product
        product_id = product.id if product is not None else ""
        minute = int(self.now()) // 60 * 60
        method = ctx.request.method
        status = ctx.status
        rollup = cast(Rollup | None, keys.rollup)
        if (
            rollup is None
            or keys.recorder is not self
            or keys.generation != self.generation
            or keys.minute != minute
            or keys.status != status
            or keys.method != method
            or keys.username != username
            or keys.app_id != app_id
            or keys.product_id != product_id
            or keys.developer_id != developer_id
        ):
            key = (
                keys.env_id,
                minute,
                keys.api_id,
                keys.route_id,
                username,
                method,
                status,
                app_id,
                product_id,
                developer_id,
            )
            rollup = self.pending.get(key)
            if rollup is None:
                if len(self.pending) >= self.max_keys:
                    self._lose(keys.env_id, 1)
                    return
                rollup = self.pending[key] = Rollup(labels_of(ctx))
            keys.recorder = self
            keys.generation = self.generation
            keys.rollup = rollup
            keys.minute = minute
            keys.status = status
            keys.method = method
            keys.username = username
            keys.app_id = app_id
            keys.product_id = product_id
            keys.developer_id = developer_id
        upstream = ctx.upstream_seconds
        rollup.add(
            ctx.latency * 1000.0,
            upstream * 1000.0 if upstream is not None else -1.0,
            ctx.request_bytes,
            ctx.response_bytes,
        )

    # ------------------------------------------------------------------ shipping

    def _lose(self, env_id: str, records: int) -> None:
        self.dropped[env_id] = self.dropped.get(env_id, 0) + records
        self.dropped_total += records

    def take(self) -> Batch:
        batch = Batch(self.pending, self.dropped)
        self.pending, self.dropped = {}, {}
        self.generation += 1
        return batch

    def give_back(self, batch: Batch) -> None:
        """A shipment failed: its rollups wait for the next one (within the bound)."""
        for key, rollup in batch.rollups.items():
            known = self.pending.get(key)
            if known is not None:
                known.merge(rollup)
            elif len(self.pending) < self.max_keys:
                self.pending[key] = rollup
            else:
                self._lose(key[0], rollup.requests)
        for env_id, records in batch.dropped.items():
            self.dropped[env_id] = self.dropped.get(env_id, 0) + records

    async def ship(self) -> bool:
        """Send what is pending; False when the sink failed (the batch is kept)."""
        if not self.pending and not self.dropped:
            return True
        batch = self.take()
        try:
            await self.sink(batch)
        except asyncio.CancelledError:
            self.give_back(batch)
            raise
        except Exception as error:
            self.give_back(batch)
            logger.warning("telemetry not delivered, kept for the next attempt: %s", error)
            return False
        self.shipped_batches += 1
        return True

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.ship()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run())

    async def stop(self) -> None:
        """Stop the timer and make a last delivery attempt."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ship(), timeout=5)
