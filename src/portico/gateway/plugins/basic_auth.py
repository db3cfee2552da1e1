"""basic-auth: the consumer is the holder of a username and password (HTTP Basic)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from portico.gateway.plugins.base import Category, ConsumerCredential, PluginConfig, PluginSpec

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class BasicAuthConfig(PluginConfig):
    hide_credentials: bool = Field(
        False, description="Remove the Authorization header before the request is proxied."
    )


class BasicAuthCredential(ConsumerCredential):
    username: str = Field(
        min_length=1, max_length=256, description="The consumer's username (unique)."
    )
    password: str = Field(
        min_length=1, max_length=1024, description="The consumer's password (stored hashed)."
    )

    secret_fields = frozenset({"password"})

    @field_validator("username")
    @classmethod
    def _sendable(cls, username: str) -> str:
        # RFC 7617: the user-id ends at the first colon, so a colon could never match
        if ":" in username or _CONTROL.search(username):
            raise ValueError("username must not contain a colon or control characters")
        return username


PLUGIN = PluginSpec(
    name="basic-auth",
    category=Category.AUTHENTICATION,
    order=101,
    reorderable=True,
    config=BasicAuthConfig,
    consumer=BasicAuthCredential,
    description="Authenticates consumers by HTTP Basic username and password (stored hashed); "
    "missing or wrong → 401.",
)
