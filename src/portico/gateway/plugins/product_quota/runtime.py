"""product-quota's per-request work, compiled with the data plane (``portico.native``).

Per request: the calling app's coverage of the route's API is looked up (worked out once per
app and API from the snapshot, then remembered), and one counter is counted in the product's
current fixed calendar window, in this process or in the node's Redis.

The answers are the seed product's documented contract, byte for byte: 403
``{"error":"no product covers this API"}``, 403 ``{"error":"product missing quota
configuration"}``, 429 ``{"error":"quota exceeded"}`` with no ``Retry-After`` and no
``X-RateLimit-*`` header (the remaining quota is read from the analytics API).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final, Protocol

from portico.gateway.context import EXPOSED, Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.counters.local import LocalCounters
from portico.gateway.counters.redis import RedisCounters, RedisUnavailable
from portico.gateway.egress import EgressGuard
from portico.gateway.plugin_services import ConsumerIndex, RuntimeServices
from portico.gateway.snapshot import SnapshotApp, SnapshotProduct

NO_CREDENTIAL: Final = b'{"error":"authentication required"}'
NO_PRODUCT: Final = b'{"error":"no product covers this API"}'
NO_QUOTA: Final = b'{"error":"product missing quota configuration"}'
EXCEEDED: Final = b'{"error":"quota exceeded"}'
UNAVAILABLE: Final = b'{"error":"quota service unavailable"}'

#: seconds per unit of the units whose windows have a fixed length
UNIT_SECONDS: Final = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
#: the node's Redis is the operator's, not a URL a user supplied: no SSRF guard on it
_OPERATOR_EGRESS: Final = EgressGuard.allowing(["0.0.0.0/0", "::/0"])
#: remembered coverages per runtime, beyond which the memo starts afresh
MEMO_LIMIT: Final = 100_000


def _json(status: int, body: bytes) -> Reply:
    return Reply(status, body, [("content-type", "application/json")])


def month_window(now: float, months: int) -> tuple[int, int]:
    """The ``months``-long calendar window (UTC) holding ``now``: windows start on the 1st of
    a month whose index since year 0 is a multiple of ``months``."""
    moment = datetime.fromtimestamp(now, UTC)
    index = moment.year * 12 + moment.month - 1
    first = index - index % months
    last = first + months
    start = datetime(first // 12, first % 12 + 1, 1, tzinfo=UTC)
    end = datetime(last // 12, last % 12 + 1, 1, tzinfo=UTC)
    return int(start.timestamp()), int(end.timestamp())


def window_length(interval: int, unit: str) -> int:
    """Seconds of a window of ``interval`` ``unit``s; 0 for months, whose length varies."""
    return interval * UNIT_SECONDS[unit] if unit in UNIT_SECONDS else 0


def window_at(now: float, length: int, interval: int) -> tuple[int, int]:
    """``[start, end)`` in epoch seconds of the fixed window of ``length`` seconds holding
    ``now`` (windows start at multiples of it since the epoch, so a 1-day one at midnight
    UTC), or with ``length`` 0 of the ``interval``-month calendar window."""
    if length:
        start = int(now // length) * length
        return start, start + length
    return month_window(now, interval)


def quota_window(now: float, interval: int, unit: str) -> tuple[int, int]:
    """The fixed calendar window of a quota holding ``now``: a 1-minute quota resets at the
    top of each minute, a 1-day one at midnight UTC, a 1-month one on the 1st."""
    return window_at(now, window_length(interval, unit), interval)


class Coverage:
    """What an app may do on one API: the product that meters it and its counter, or the
    refusal. (A plain class: see ``counters.local.Admission``.)"""

    __slots__ = ("counter", "exposed", "interval", "length", "limit", "product", "refusal")

    def __init__(
        self,
        product: SnapshotProduct | None,
        refusal: bytes,
        counter: str = "",
        limit: int = 0,
        interval: int = 1,
        unit: str = "minute",
    ) -> None:
        self.product = product
        self.refusal = refusal  # empty: admitted (metered unless limit is -1)
        self.counter = counter
        self.limit = limit
        self.interval = interval
        self.length = window_length(interval, unit)
        #: what ``ctx_namespace`` puts in ``ctx.vars`` for the request (None: no namespace)
        self.exposed: dict[str, Any] | None = None


def exposure(namespace: str, product: SnapshotProduct, app: SnapshotApp) -> dict[str, Any]:
    """``ctx.vars`` entries naming the product and app under ``namespace``: one variable per
    value for later plugins (``$<ns>_product_name``...), and the object log entries get."""
    return {
        f"{namespace}_product_id": product.id,
        f"{namespace}_product_name": product.name,
        f"{namespace}_app_id": app.id,
        f"{namespace}_app_name": app.name,
        f"{namespace}_developer_id": app.developer_id,
        EXPOSED: {
            namespace: {
                "product": {"id": product.id, "name": product.name},
                "app": {"id": app.id, "name": app.name, "developer_id": app.developer_id},
            }
        },
    }


def coverage_of(app: SnapshotApp | None, api_id: str, consumers: ConsumerIndex) -> Coverage:
    """The app's lowest-ranked product deployed here that covers ``api_id``."""
    if app is None:
        return Coverage(None, NO_PRODUCT)
    for product_id in app.product_ids:
        product = consumers.products.get(product_id)
        if product is None or api_id not in product.api_ids:
            continue
        quota = product.quota
        if quota is None:
            return Coverage(product, NO_QUOTA)
        subject = app.developer_id if quota.key_scope == "developer" else app.id
        return Coverage(
            product,
            b"",
            counter=f"{product.id}:{quota.key_scope}:{subject}",
            limit=quota.limit,
            interval=quota.interval,
            unit=quota.interval_unit,
        )
    return Coverage(None, NO_PRODUCT)


class ProductQuotaSettings(Protocol):
    """What the runtime reads of ``config.ProductQuotaConfig``."""

    @property
    def error_policy(self) -> str: ...

    @property
    def ctx_namespace(self) -> str | None: ...


class ProductQuotaRuntime(BasePluginRuntime):
    def __init__(self, config: ProductQuotaSettings, services: RuntimeServices) -> None:
        self.fail_open = config.error_policy == "fail_open"
        self.namespace = config.ctx_namespace
        self.consumers: ConsumerIndex = services.consumers
        self.counters: LocalCounters = services.counters
        self.now: Callable[[], float] = services.now
        self.redis: RedisCounters | None = None
        url = services.quota_redis_url
        if url:
            key = hashlib.sha256(url.encode()).hexdigest()  # the URL may carry a password
            self.redis = services.shared(
                "redis-quota", key, lambda: RedisCounters(url, _OPERATOR_EGRESS)
            )
        #: API id → consumer id → coverage (a runtime may serve several APIs at consumer scope)
        self.memo: dict[str, dict[str, Coverage]] = {}
        self.remembered = 0

    def access(self, ctx: RequestContext) -> Access:
        consumer = ctx.consumer
        if consumer is None:  # no authentication plugin ran before this one
            return _json(401, NO_CREDENTIAL)
        api_id = ctx.route.api_id
        by_consumer = self.memo.get(api_id)
        if by_consumer is None:
            by_consumer = self.memo[api_id] = {}
        coverage = by_consumer.get(consumer.id)
        if coverage is None:
            coverage = coverage_of(consumer.app, api_id, self.consumers)
            if self.namespace and coverage.product is not None and consumer.app is not None:
                coverage.exposed = exposure(self.namespace, coverage.product, consumer.app)
            if self.remembered >= MEMO_LIMIT:
                self.memo, self.remembered = {api_id: {}}, 0
                by_consumer = self.memo[api_id]
            by_consumer[consumer.id] = coverage
            self.remembered += 1
        exposed = coverage.exposed
        if exposed is not None:
            ctx.vars.update(exposed)
        if coverage.refusal:
            return _json(403, coverage.refusal)
        ctx.product = coverage.product
        if coverage.limit < 0:  # unlimited: authenticated and attributed, not counted
            return None
        now = self.now()
        start, end = window_at(now, coverage.length, coverage.interval)
        if self.redis is not None:
            return self._shared(coverage, start, end, now, self.redis)
        admission = self.counters.hit_within(
            "pq:" + coverage.counter, coverage.limit, start, end, now
        )
        return None if admission.allowed else _json(429, EXCEEDED)

    async def _shared(
        self, coverage: Coverage, start: int, end: int, now: float, redis: RedisCounters
    ) -> Reply | None:
        # the window's start is part of the key: each window is its own counter, which
        # expires once the window is over
        key = f"portico:pq:{coverage.counter}:{start}"
        try:
            admission = await redis.hit(key, coverage.limit, max(1, end - int(now)))
        except RedisUnavailable:
            return None if self.fail_open else _json(503, UNAVAILABLE)
        return None if admission.allowed else _json(429, EXCEEDED)
