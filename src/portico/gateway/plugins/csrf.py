"""csrf: double-submit token signed with ``key``; unsafe methods without a valid one → 401."""

from __future__ import annotations

from pydantic import Field

from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec
from portico.gateway.plugins.key_auth import HEADER_NAME


class CsrfConfig(PluginConfig):
    key: str = Field(
        # 16 characters at least: the token's signature is only as strong as this secret
        min_length=16,
        max_length=4096,
        description="Secret the tokens are signed with (at least 16 characters).",
    )
    expires: int = Field(
        7200, ge=1, le=2_592_000, description="Seconds a token stays valid after it is issued."
    )
    name: str = Field(
        "apisix-csrf-token",
        pattern=HEADER_NAME,
        description="Name of the cookie holding the token and of the header echoing it.",
    )

    secret_fields = frozenset({"key"})


PLUGIN = PluginSpec(
    name="csrf",
    category=Category.SECURITY,
    order=40,
    reorderable=False,
    config=CsrfConfig,
    description="Double-submit CSRF protection: safe methods get a signed token cookie; "
    "unsafe methods without a matching, valid token header → 401.",
)
