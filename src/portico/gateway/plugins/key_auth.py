"""key-auth: the consumer is the holder of an API key sent in a header (or query argument)."""

from __future__ import annotations

import dataclasses

from pydantic import Field

from portico.gateway.plugins.base import (
    HEADER_NAME,
    Category,
    ConsumerCredential,
    PluginConfig,
    PluginSpec,
)
from portico.gateway.plugins.key_auth_runtime import KeyAuthRuntime


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


PLUGIN = PluginSpec(
    name="key-auth",
    category=Category.AUTHENTICATION,
    order=100,
    reorderable=True,
    config=KeyAuthConfig,
    consumer=KeyAuthCredential,
    description="Authenticates consumers by an API key; missing → 401 'Missing API key in "
    "request', unknown → 401 'Invalid API key in request'.",
)


# (the runtime, compiled with the data plane, is in key_auth_runtime)
PLUGIN = dataclasses.replace(PLUGIN, runtime=KeyAuthRuntime)
