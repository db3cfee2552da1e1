"""product-quota: enforce the quota of the API product an app subscribed to.

The quota itself (``limit`` per ``interval`` ``interval_unit``, a fixed calendar window,
``-1`` for unlimited) belongs to the product and is read at run time from the snapshot; this
config only says how refusals look and where the counters live.
"""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from portico.core.validation import invalid
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec
from portico.gateway.plugins.limit_count import Policy, RedisUrl


class ProductQuotaConfig(PluginConfig):
    rejected_code: int = Field(
        429,
        ge=200,
        le=599,
        description='Status when the quota is used up (body {"error":"quota exceeded"}).',
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

    secret_fields = frozenset({"redis_url"})

    @model_validator(mode="after")
    def _redis_needs_url(self) -> Self:
        if self.policy == "redis" and self.redis_url is None:
            invalid(("redis_url",), 'property "redis_url" is required when policy is "redis"')
        return self


PLUGIN = PluginSpec(
    name="product-quota",
    category=Category.TRAFFIC,
    order=230,
    reorderable=True,
    config=ProductQuotaConfig,
    description="Enforces the quota of the product the calling app subscribed to; the quota "
    "(limit per interval, fixed calendar window, -1 unlimited) comes from the product at run "
    'time, not from this config. Used up → 429 {"error":"quota exceeded"}; no product '
    "covering the API → 403.",
)
