"""limit-count: at most ``count`` requests per ``time_window`` seconds per key.

Counters are local to the gateway process, or shared in Redis (atomically) so that N workers
together admit exactly ``count``. The key helpers and the Redis URL type live here because
limit-req and product-quota use the same rules.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from typing import Annotated, Literal, Self
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, model_validator

from portico.core.validation import invalid
from portico.gateway.context import Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.counters import Admission
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec
from portico.gateway.redis_counters import RedisCounters, RedisUnavailable, redis_counters
from portico.gateway.services import RuntimeServices

KeyType = Literal["var", "var_combination", "constant"]
Policy = Literal["local", "redis"]

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_VARIABLE_REF = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*")


def key_error(key_type: str, key: str) -> str | None:
    """Why ``key`` cannot be a limit key of ``key_type``, or None.

    A ``var`` key names one variable without ``$`` (as APISIX reads ``ctx.var[key]``); a
    ``var_combination`` must reference at least one ``$variable``, or every client would share
    one counter without the operator meaning it (that is what ``constant`` is for).
    """
    if key_type == "var" and not _VARIABLE.fullmatch(key):
        return (
            'key must be a variable name without "$" (e.g. remote_addr, http_x_api_key) '
            'when key_type is "var"'
        )
    if key_type == "var_combination" and not _VARIABLE_REF.search(key):
        return (
            'key must combine variables such as "$remote_addr $consumer_name" '
            'when key_type is "var_combination"'
        )
    return None


def _redis_url(value: str) -> str:
    """``redis://[user:password@]host[:port][/db]`` or ``rediss://`` (TLS)."""
    message = "redis_url must be a redis:// or rediss:// URL: scheme://[:password@]host[:port][/db]"
    if len(value) > 2048:
        raise ValueError("redis_url must be at most 2048 characters long")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise ValueError(message) from None
    if parts.scheme not in ("redis", "rediss") or not parts.hostname or port == 0:
        raise ValueError(message)
    if parts.fragment or not re.fullmatch(r"(/\d{0,5})?", parts.path):
        raise ValueError(message)
    return value


RedisUrl = Annotated[str, AfterValidator(_redis_url)]


class LimitCountConfig(PluginConfig):
    count: int = Field(gt=0, le=1_000_000_000, description="Requests admitted per window.")
    time_window: int = Field(
        gt=0, le=31_536_000, description="Length of the counting window, in seconds."
    )
    key_type: KeyType = Field(
        "var",
        description="How `key` is read: one variable (var), a string of $variables "
        "(var_combination), or a literal shared by every request (constant).",
    )
    key: str = Field(
        "remote_addr",
        min_length=1,
        max_length=256,
        description="What requests are counted by (falls back to remote_addr when empty).",
    )
    rejected_code: int = Field(503, ge=200, le=599, description="Status of refused requests.")
    rejected_msg: str | None = Field(
        None, min_length=1, max_length=1024, description="Body of refused requests."
    )
    policy: Policy = Field(
        "local", description="Where counters live: this process (local) or Redis (shared)."
    )
    redis_url: RedisUrl | None = Field(
        None,
        description="Redis holding shared counters (required when policy is redis); "
        "may carry a password.",
    )
    allow_degradation: bool = Field(
        False, description="Admit requests when Redis is unreachable instead of failing them."
    )
    show_limit_quota_header: bool = Field(
        True, description="Add X-RateLimit-Limit, -Remaining and -Reset response headers."
    )

    secret_fields = frozenset({"redis_url"})

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        reason = key_error(self.key_type, self.key)
        if reason is not None:
            invalid(("key",), reason, self.key)
        if self.policy == "redis" and self.redis_url is None:
            invalid(("redis_url",), 'property "redis_url" is required when policy is "redis"')
        return self


PLUGIN = PluginSpec(
    name="limit-count",
    category=Category.TRAFFIC,
    order=210,
    reorderable=True,
    config=LimitCountConfig,
    description="Admits `count` requests per `time_window` seconds per key, counted locally or "
    "in Redis; others get `rejected_code` (503). Adds X-RateLimit-* headers.",
)


def limit_scope(config: PluginConfig) -> str:
    """One counter space per attachment configuration: identical configs on different routes of
    one service share it, as APISIX's service-level limit does; it is the same in every gateway
    process, so a shared store (Redis) sees one counter. Secret fields stay out of it."""
    dumped = config.model_dump_json(exclude=set(config.secret_fields))
    return hashlib.sha256(dumped.encode()).hexdigest()[:16]


def limit_key(scope: str, key_type: KeyType, key: str, ctx: RequestContext) -> str:
    """The counter a request is limited by: ``key`` read as ``key_type`` says, the client's
    address when it reads empty; per route unless the key is a constant."""
    if key_type == "constant":
        return f"{scope}::{key}"
    if key_type == "var_combination":
        resolved = 0

        def read(match: re.Match[str]) -> str:
            nonlocal resolved
            value = ctx.var(match.group(0)[1:])
            resolved += bool(value)
            return value or ""

        value = _VARIABLE_REF.sub(read, key)
        if not resolved:  # as APISIX: no variable had a value → the client's address
            value = ""
    else:
        value = ctx.var(key) or ""
    return f"{scope}:{ctx.route.id}:{value or ctx.client_ip}"


class LimitCountRuntime(BasePluginRuntime):
    """``count`` requests per ``time_window`` seconds per key, in fixed windows; the
    ``X-RateLimit-*`` headers tell the client where it stands. Counters live in this process
    (local) or in Redis (redis), where every gateway sharing it sees the same count."""

    def __init__(self, config: LimitCountConfig, services: RuntimeServices) -> None:
        self.config = config
        self.counters = services.counters
        self.now = services.now
        self.scope = limit_scope(config)
        self.redis: RedisCounters | None = None
        if config.policy == "redis" and config.redis_url is not None:
            self.redis = redis_counters(services, config.redis_url)
        self.message = config.rejected_msg or "Too many requests"
        self.limit = str(config.count)

    def access(self, ctx: RequestContext) -> Access:
        config = self.config
        key = limit_key(self.scope, config.key_type, config.key, ctx)
        if self.redis is not None:
            return self._shared(ctx, key, self.redis)  # waits for Redis
        admission = self.counters.hit(key, config.count, config.time_window, self.now())
        return self._verdict(ctx, admission)

    async def _shared(self, ctx: RequestContext, key: str, redis: RedisCounters) -> Reply | None:
        config = self.config
        try:
            admission = await redis.hit(f"portico:lc:{key}", config.count, config.time_window)
        except RedisUnavailable:
            # APISIX's behaviour: admit when degradation is allowed, else fail closed
            # (the cause was logged, rate-limited, by the counters)
            if config.allow_degradation:
                return None
            return Reply.error(500, "failed to limit count")
        return self._verdict(ctx, admission)

    def _verdict(self, ctx: RequestContext, admission: Admission) -> Reply | None:
        config = self.config
        headers: list[tuple[str, str]] = []
        if config.show_limit_quota_header:
            headers = [
                ("x-ratelimit-limit", self.limit),
                ("x-ratelimit-remaining", str(admission.remaining)),
                ("x-ratelimit-reset", str(admission.reset)),
            ]
        if not admission.allowed:
            return Reply.error(config.rejected_code, self.message, headers)
        ctx.response_headers.update(headers)
        return None


PLUGIN = dataclasses.replace(PLUGIN, runtime=LimitCountRuntime)
