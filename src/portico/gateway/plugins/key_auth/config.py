"""key-auth's configuration and consumer credential (pydantic models, kept out of the compiled
``runtime``: see CONVENTIONS.md "Compiled modules")."""

from __future__ import annotations

from pydantic import Field

from portico.gateway.plugins.base import (
    HEADER_NAME,
    ConsumerCredential,
    PluginConfig,
)


class KeyAuthConfig(PluginConfig):
    header: str = Field(
        "apikey", pattern=HEADER_NAME, description="Request header carrying the API key."
    )
    query: str = Field(
        "apikey", pattern=HEADER_NAME, description="Query argument tried when the header is absent."
    )
    hide_credentials: bool = Field(
        False, description="Remove the key from the request before it is proxied upstream."
    )


class KeyAuthCredential(ConsumerCredential):
    key: str = Field(
        min_length=8,
        max_length=512,
        description="The consumer's API key (stored hashed; generated when omitted on an app).",
    )

    secret_fields = frozenset({"key"})
