"""key-auth's per-request work, compiled with the data plane (``portico.native``).

Apart from ``config``, which holds the plugin's pydantic models (see CONVENTIONS.md "Compiled
modules"); it reads its settings through ``KeyAuthSettings`` once, when the route's chain is
built.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Final, Protocol

from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import ConsumerIndex, RuntimeServices

# (Final aliases: see CONVENTIONS.md "Compiled modules")
_sha256: Final = hashlib.sha256
_compare_digest: Final = hmac.compare_digest


class KeyAuthSettings(Protocol):
    """What the runtime reads of ``config.KeyAuthConfig``."""

    @property
    def header(self) -> str: ...

    @property
    def query(self) -> str: ...

    @property
    def hide_credentials(self) -> bool: ...


class KeyAuthRuntime(BasePluginRuntime):
    """Finds the consumer by the SHA-256 of the presented key (consumers' keys are stored
    hashed), then compares in constant time."""

    def __init__(self, config: KeyAuthSettings, services: RuntimeServices) -> None:
        self.header = config.header
        self.query = config.query
        self.hide = config.hide_credentials
        self.hidden = config.header.lower()  # (request header names are lower-case)
        self.consumers: ConsumerIndex = services.consumers
        self.now: Callable[[], float] = services.now

    def access(self, ctx: RequestContext) -> Reply | None:
        # APISIX's order: the header, then the query argument
        key = ctx.header(self.header)
        in_query = False
        if not key:
            key = ctx.arg(self.query)
            in_query = True
        if not key:
            return Reply.error(401, "Missing API key in request")
        digest = _sha256(key.encode()).hexdigest()
        consumer = self.consumers.find("key-auth", digest)
        stored = consumer.credentials["key-auth"].get("key_hash", "") if consumer else ""
        if consumer is None or not _compare_digest(str(stored), digest):
            # a key replaced by a rotation works until its grace period ends
            retired = self.consumers.find_retiring("key-auth", digest, self.now())
            if retired is None:
                return Reply.error(401, "Invalid API key in request")
            consumer = retired.consumer
        ctx.consumer = consumer
        if self.hide:  # taken out of wherever it was read, the rest forwarded as it came
            if in_query:
                ctx.drop_argument(self.query)
            else:
                ctx.remove_upstream_headers.add(self.hidden)
        return None
