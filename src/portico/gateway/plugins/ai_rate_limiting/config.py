"""ai-rate-limiting's configuration (a pydantic model, kept out of the compiled ``runtime``:
see CONVENTIONS.md "Compiled modules")."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from portico.gateway.plugins.base import PluginConfig


class AiRateLimitingConfig(PluginConfig):
    limit: int = Field(
        gt=0,
        le=1_000_000_000_000,
        description="LLM tokens allowed per time window (counted as limit_strategy says).",
    )
    time_window: int = Field(
        gt=0,
        le=31_536_000,
        description="Length of the window in seconds (at most a year).",
    )
    # 429 rather than APISIX's 503: the client is over its budget, the service is not down
    rejected_code: int = Field(
        429, ge=200, le=599, description="Status answered once the budget is spent."
    )
    limit_strategy: Literal["total_tokens", "prompt_tokens", "completion_tokens"] = Field(
        "total_tokens",
        description="Which tokens of the provider's usage report count against the limit.",
    )
