"""limit-req: a leaky bucket per key; ``rate`` requests a second flow, ``burst`` more wait."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from portico.core.validation import invalid
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec
from portico.gateway.plugins.limit_count import KeyType, key_error


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
