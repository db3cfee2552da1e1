"""limit-req: a leaky bucket per key; ``rate`` requests a second flow, ``burst`` more wait.

As nginx's ``limit_req`` and APISIX's limit-req: a request ahead of the ``rate`` schedule by at
most ``burst`` requests is delayed until it is on schedule (or passed at once with ``nodelay``,
still counted); one further ahead is refused with ``rejected_code``. The buckets live in this
process (the model has no shared policy), across configuration swaps.
"""

from __future__ import annotations

import dataclasses
from asyncio import sleep
from typing import Self

from pydantic import Field, model_validator

from portico.core.validation import invalid
from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec
from portico.gateway.plugins.limit_count.config import KeyType, key_error
from portico.gateway.plugins.limit_count.runtime import limit_key, limit_scope


class LimitReqConfig(PluginConfig):
    # the seed types rate and burst as integers (APISIX accepts numbers): the seed wins
    rate: int = Field(
        gt=0, le=1_000_000, description="Requests per second that flow without delay."
    )
    burst: int = Field(
        ge=0,
        le=1_000_000,
        description="Requests per second above `rate` that are delayed rather than refused.",
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
        description="What requests are limited by (falls back to remote_addr when empty).",
    )
    rejected_code: int = Field(503, ge=200, le=599, description="Status of refused requests.")
    rejected_msg: str | None = Field(
        None, min_length=1, max_length=1024, description="Body of refused requests."
    )
    nodelay: bool = Field(
        False, description="Pass requests within the burst at once instead of delaying them."
    )

    @model_validator(mode="after")
    def _key_matches_type(self) -> Self:
        reason = key_error(self.key_type, self.key)
        if reason is not None:
            invalid(("key",), reason, self.key)
        return self


PLUGIN = PluginSpec(
    name="limit-req",
    category=Category.TRAFFIC,
    order=200,
    reorderable=True,
    config=LimitReqConfig,
    description="Leaky-bucket rate limit per key: `rate` requests a second, `burst` delayed; "
    "beyond that `rejected_code` (503).",
)


class LimitReqRuntime(BasePluginRuntime):
    """One leaky bucket per key (``services.counters.buckets``), the clock ``services.now``."""

    def __init__(self, config: LimitReqConfig, services: RuntimeServices) -> None:
        self.config = config
        self.buckets = services.counters.buckets
        self.now = services.now
        self.scope = limit_scope(config)
        self.message = config.rejected_msg or "Too many requests"

    async def access(self, ctx: RequestContext) -> Reply | None:
        config = self.config
        key = limit_key(self.scope, config.key_type, config.key, ctx)
        delay = self.buckets.incoming(key, config.rate, config.burst, self.now())
        if delay is None:
            return Reply.error(config.rejected_code, self.message)
        # under a millisecond is not worth a timer (APISIX's threshold too)
        if delay >= 0.001 and not config.nodelay:
            await sleep(delay)
        return None


PLUGIN = dataclasses.replace(PLUGIN, runtime=LimitReqRuntime)
