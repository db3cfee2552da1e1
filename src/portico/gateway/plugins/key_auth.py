"""key-auth: the consumer is the holder of an API key sent in a header (or query argument)."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac

from pydantic import Field

from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugins.base import Category, ConsumerCredential, PluginConfig, PluginSpec
from portico.gateway.services import RuntimeServices

HEADER_NAME = r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}$"  # an RFC 9110 token


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


class KeyAuthRuntime(BasePluginRuntime):
    """Finds the consumer by the SHA-256 of the presented key (consumers' keys are stored
    hashed), then compares in constant time."""

    def __init__(self, config: KeyAuthConfig, services: RuntimeServices) -> None:
        self.config = config
        self.consumers = services.consumers

    def access(self, ctx: RequestContext) -> Reply | None:
        key = ctx.header(self.config.header) or ctx.arg(self.config.query)
        if not key:
            return Reply.error(401, "Missing API key in request")
        digest = hashlib.sha256(key.encode()).hexdigest()
        consumer = self.consumers.find("key-auth", digest)
        stored = consumer.credentials["key-auth"].get("key_hash", "") if consumer else ""
        if consumer is None or not hmac.compare_digest(str(stored), digest):
            return Reply.error(401, "Invalid API key in request")
        ctx.consumer = consumer
        if self.config.hide_credentials:
            ctx.remove_upstream_headers.add(self.config.header.lower())
        return None


PLUGIN = dataclasses.replace(PLUGIN, runtime=KeyAuthRuntime)
