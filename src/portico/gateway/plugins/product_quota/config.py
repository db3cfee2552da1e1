"""product-quota's configuration (a pydantic model, kept out of the compiled ``runtime``: see
CONVENTIONS.md "Compiled modules")."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from portico.gateway.plugins.base import PluginConfig


class ProductQuotaConfig(PluginConfig):
    error_policy: Literal["fail_close", "fail_open"] = Field(
        "fail_close",
        description="When the counter store is unreachable: refuse with 503 (fail_close) or "
        "admit the request unmetered (fail_open).",
    )
