"""limit-count's per-request work and the key rules limit-req shares, compiled with the data
plane (``portico.native``).

Apart from ``config``, which holds the plugin's pydantic models (see CONVENTIONS.md "Compiled
modules"); the runtime reads its settings through ``LimitCountSettings`` once, when the route's
chain is built.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Set
from typing import Final, Protocol

from portico.gateway.context import Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.counters.local import Admission, LocalCounters
from portico.gateway.counters.redis import RedisCounters, RedisUnavailable
from portico.gateway.plugin_services import RuntimeServices

VARIABLE_REF: Final = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*")


class LimitSettings(Protocol):
    """An attachment's configuration as the limit key rules see it (a pydantic model)."""

    @property
    def secret_fields(self) -> Set[str]: ...

    def model_dump_json(self, *, exclude: set[str]) -> str: ...


class LimitCountSettings(LimitSettings, Protocol):
    """What the runtime reads of ``config.LimitCountConfig``."""

    @property
    def count(self) -> int: ...

    @property
    def time_window(self) -> int: ...

    @property
    def key_type(self) -> str: ...

    @property
    def key(self) -> str: ...

    @property
    def rejected_code(self) -> int: ...

    @property
    def rejected_msg(self) -> str | None: ...

    @property
    def policy(self) -> str: ...

    @property
    def redis_url(self) -> str | None: ...

    @property
    def allow_degradation(self) -> bool: ...

    @property
    def show_limit_quota_header(self) -> bool: ...


def limit_scope(config: LimitSettings) -> str:
    """One counter space per attachment configuration: identical configs on different routes of
    one service share it, as APISIX's service-level limit does; it is the same in every gateway
    process, so a shared store (Redis) sees one counter. Secret fields stay out of it."""
    dumped = config.model_dump_json(exclude=set(config.secret_fields))
    return hashlib.sha256(dumped.encode()).hexdigest()[:16]


def limit_key(scope: str, key_type: str, key: str, ctx: RequestContext) -> str:
    """The counter a request is limited by: ``key`` read as ``key_type`` says, the client's
    address when it reads empty; per route unless the key is a constant."""
    if key_type == "constant":
        return f"{scope}::{key}"
    if key_type == "var_combination":
        read = _VariableReader(ctx)
        value = VARIABLE_REF.sub(read, key)
        if not read.resolved:  # as APISIX: no variable had a value → the client's address
            value = ""
    else:
        value = ctx.var(key) or ""
    return f"{scope}:{ctx.route.id}:{value or ctx.client_ip}"


class _VariableReader:
    """Replaces each ``$variable`` of a combination by its value; counts those that had one."""

    def __init__(self, ctx: RequestContext) -> None:
        self.ctx = ctx
        self.resolved = 0

    def __call__(self, match: re.Match[str]) -> str:
        value = self.ctx.var(match.group(0)[1:])
        if value:
            self.resolved += 1
        return value or ""


def redis_counters(services: RuntimeServices, url: str) -> RedisCounters:
    """The process's counters in the Redis at ``url``, shared across configuration swaps."""
    key = hashlib.sha256(url.encode()).hexdigest()  # the URL may carry a password
    return services.shared("redis", key, lambda: RedisCounters(url, services.egress))


class LimitCountRuntime(BasePluginRuntime):
    """``count`` requests per ``time_window`` seconds per key, in fixed windows; the
    ``X-RateLimit-*`` headers tell the client where it stands. Counters live in this process
    (local) or in Redis (redis), where every gateway sharing it sees the same count."""

    def __init__(self, config: LimitCountSettings, services: RuntimeServices) -> None:
        self.count = config.count
        self.time_window = config.time_window
        self.key_type = config.key_type
        self.key = config.key
        self.rejected_code = config.rejected_code
        self.allow_degradation = config.allow_degradation
        self.show_headers = config.show_limit_quota_header
        self.counters: LocalCounters = services.counters
        self.now: Callable[[], float] = services.now
        self.scope = limit_scope(config)
        self.redis: RedisCounters | None = None
        if config.policy == "redis" and config.redis_url is not None:
            self.redis = redis_counters(services, config.redis_url)
        self.message = config.rejected_msg or "Too many requests"
        self.limit = str(config.count)

    def access(self, ctx: RequestContext) -> Access:
        key = limit_key(self.scope, self.key_type, self.key, ctx)
        if self.redis is not None:
            return self._shared(ctx, key, self.redis)  # waits for Redis
        admission = self.counters.hit(key, self.count, self.time_window, self.now())
        return self._verdict(ctx, admission)

    async def _shared(self, ctx: RequestContext, key: str, redis: RedisCounters) -> Reply | None:
        try:
            admission = await redis.hit(f"portico:lc:{key}", self.count, self.time_window)
        except RedisUnavailable:
            # APISIX's behaviour: admit when degradation is allowed, else fail closed
            # (the cause was logged, rate-limited, by the counters)
            if self.allow_degradation:
                return None
            return Reply.error(500, "failed to limit count")
        return self._verdict(ctx, admission)

    def _verdict(self, ctx: RequestContext, admission: Admission) -> Reply | None:
        if not admission.allowed:
            headers: list[tuple[str, str]] = []
            if self.show_headers:
                headers = [
                    ("x-ratelimit-limit", self.limit),
                    ("x-ratelimit-remaining", str(admission.remaining)),
                    ("x-ratelimit-reset", str(admission.reset)),
                ]
            return Reply.error(self.rejected_code, self.message, headers)
        if self.show_headers:  # (set one by one: no list of pairs made per request)
            added = ctx.response_headers
            added["x-ratelimit-limit"] = self.limit
            added["x-ratelimit-remaining"] = str(admission.remaining)
            added["x-ratelimit-reset"] = str(admission.reset)
        return None
