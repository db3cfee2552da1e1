"""product-quota's configuration (a pydantic model, kept out of the compiled ``runtime``: see
CONVENTIONS.md "Compiled modules")."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from portico.gateway.plugins.base import PluginConfig
from portico.gateway.telemetry.log_entry import ENTRY_KEYS


class ProductQuotaConfig(PluginConfig):
    error_policy: Literal["fail_close", "fail_open"] = Field(
        "fail_close",
        description="When the counter store is unreachable: refuse with 503 (fail_close) or "
        "admit the request unmetered (fail_open).",
    )
    ctx_namespace: str | None = Field(
        None,
        pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$",
        description="The seed product's field: the name under which the chosen product and "
        "app are exposed to later plugins (variables $<ns>_product_id, $<ns>_product_name, "
        "$<ns>_app_id, $<ns>_app_name, $<ns>_developer_id) and to log entries (an object "
        '"<ns>": {"product": {id, name}, "app": {id, name, developer_id}}).',
    )

    @field_validator("ctx_namespace")
    @classmethod
    def _not_an_entry_key(cls, value: str | None) -> str | None:
        if value in ENTRY_KEYS:
            raise ValueError(f"ctx_namespace {value!r} is a key of log entries; choose another")
        return value
