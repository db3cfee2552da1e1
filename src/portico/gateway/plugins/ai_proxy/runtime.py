"""ai-proxy's per-request work, compiled with the data plane (``portico.native``).

Apart from ``config``, which holds the plugin's pydantic models (see CONVENTIONS.md "Compiled
modules"); it reads its settings through ``AiProxySettings`` once, when the route's chain is
built.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

from portico.core.egress import EgressGuard, EgressRefused
from portico.gateway.context import (
    Access,
    BasePluginRuntime,
    DirectUpstream,
    Reply,
    RequestContext,
)
from portico.gateway.http.upstream_contract import Timeouts
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._ai_chat import WANTS_USAGE, chat_now, chat_request, replace_body

logger: Final = logging.getLogger("portico.gateway.plugins.ai_proxy")

#: the OpenAI-compatible chat completions endpoint of each provider with a well-known one
ENDPOINTS: Final[dict[str, str]] = {
    "openai": "https://api.openai.com/v1/chat/completions",
    "deepseek": "https://api.deepseek.com/chat/completions",
    "mistral": "https://api.mistral.ai/v1/chat/completions",
    "openrouter": "https://openrouter.ai/api/v1/chat/completions",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
    "anthropic": "https://api.anthropic.com/v1/chat/completions",
}
#: the client's own credentials and cookies are never passed on to the provider
CLIENT_CREDENTIALS: Final = ("authorization", "x-api-key", "api-key", "cookie")
#: how long a provider's checked address is reused before its name is resolved again
ADDRESS_TTL: Final = 30.0

# (Final aliases: see CONVENTIONS.md "Compiled modules")
_monotonic: Final = time.monotonic


class ModelSettings(Protocol):
    """What the runtime reads of ``config.ModelSelection``."""

    @property
    def source(self) -> str: ...

    @property
    def header(self) -> str | None: ...

    @property
    def name(self) -> str | None: ...


class AuthSettings(Protocol):
    """What the runtime reads of ``config.ProviderAuth``."""

    @property
    def header(self) -> Mapping[str, str]: ...


class OverrideSettings(Protocol):
    """What the runtime reads of ``config.ProviderOverride``."""

    @property
    def endpoint(self) -> str: ...


class AiProxySettings(Protocol):
    """What the runtime reads of ``config.AiProxyConfig``."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> ModelSettings: ...

    @property
    def auth(self) -> AuthSettings: ...

    @property
    def override(self) -> OverrideSettings | None: ...

    @property
    def timeout(self) -> int: ...

    @property
    def keepalive(self) -> bool: ...


class ProviderDestination:
    """The provider's endpoint: its address, checked by the egress guard (the SSRF guard) and
    kept ``ADDRESS_TTL`` seconds, so that a request does not pay a DNS lookup."""

    def __init__(self, url: str, guard: EgressGuard, timeout_ms: int, keepalive: bool) -> None:
        parts = urlsplit(url)
        self.url = url
        self.guard = guard
        self.tls = parts.scheme == "https"
        self.hostname = parts.hostname or ""
        self.port = parts.port or (443 if self.tls else 80)
        self.host_header = parts.netloc  # (the URL carries no credentials: see HttpUrl)
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        seconds = timeout_ms / 1000
        self.timeouts = Timeouts(connect=seconds, send=seconds, read=seconds)
        self.keepalive = keepalive  # False: a connection a request, closed after the answer
        self.checked: DirectUpstream | None = None
        self.expires = 0.0

    def current(self) -> DirectUpstream | None:
        """The checked address while it is fresh, else None (``resolve`` it)."""
        if self.checked is not None and _monotonic() < self.expires:
            return self.checked
        return None

    async def resolve(self) -> DirectUpstream:
        """Where to send a request now (raises ``EgressRefused``)."""
        checked = self.checked
        now = _monotonic()
        if checked is not None and now < self.expires:
            return checked
        destination = await self.guard.destination(self.url)
        checked = self.checked = DirectUpstream(
            destination.address,
            destination.port,
            self.tls,
            self.hostname,
            self.host_header,
            self.path,
            self.timeouts,
            self.keepalive,
        )
        self.expires = now + ADDRESS_TTL
        return checked


class AiProxyRuntime(BasePluginRuntime):
    """Sends the chat request to the provider instead of the route's upstream
    (``ctx.direct``: the gateway's engine forwards it and streams the answer back chunk by
    chunk, SSE included). The body gets the model (from the config, or from a request header,
    as ``model`` says); the provider gets the configured ``auth.header`` credentials, never
    the client's own. The connection to the provider is pooled, or with ``keepalive`` false
    opened for each request and closed after its answer. The provider down or too slow is the
    engine's 502/504."""

    def __init__(self, config: AiProxySettings, services: RuntimeServices) -> None:
        override = config.override
        endpoint = override.endpoint if override is not None else ENDPOINTS[config.provider]
        self.destination = ProviderDestination(
            endpoint, services.egress, config.timeout, config.keepalive
        )
        model = config.model
        self.model_header: str | None = model.header if model.source == "header" else None
        self.model_name: str | None = model.name
        self.credentials = {name.lower(): value for name, value in config.auth.header.items()}

    def access(self, ctx: RequestContext) -> Access:
        chat = chat_now(ctx)
        direct = self.destination.current()
        if chat is None or direct is None:
            return self.access_later(ctx)  # a body or a DNS answer to wait for
        if isinstance(chat, Reply):
            return chat
        return self.prepare(ctx, chat, direct)

    async def access_later(self, ctx: RequestContext) -> Reply | None:
        chat = await chat_request(ctx)
        if isinstance(chat, Reply):
            return chat
        try:
            direct = await self.destination.resolve()
        except EgressRefused as refused:
            logger.warning("ai-proxy: provider %s refused: %s", self.destination.hostname, refused)
            return Reply.error(502, "the provider's address may not be reached from the gateway")
        return self.prepare(ctx, chat, direct)

    def prepare(
        self, ctx: RequestContext, chat: dict[str, Any], direct: DirectUpstream
    ) -> Reply | None:
        """The request as the provider gets it, and where it goes."""
        if self.model_header is not None:
            model = ctx.header(self.model_header)
            if not model:
                return Reply.error(400, f'header "{self.model_header}" naming the model is missing')
            chat["model"] = model
        elif self.model_name is not None:
            chat["model"] = self.model_name
        elif not isinstance(chat.get("model"), str) or not chat["model"]:
            return Reply.error(400, 'property "model" is required')
        if chat.get("stream") is True and ctx.vars.get(WANTS_USAGE):
            _ask_for_usage(chat)
        replace_body(ctx, chat)
        ctx.remove_upstream_headers.update(CLIENT_CREDENTIALS)
        headers = ctx.upstream_headers
        headers.update(self.credentials)
        # the answer must reach the plugins as it is (usage read by ai-rate-limiting)
        headers["accept-encoding"] = "identity"
        ctx.request.query = ""  # the endpoint's own query (in its path) is what counts
        ctx.direct = direct
        return None


def _ask_for_usage(chat: dict[str, Any]) -> None:
    """Ask a streaming provider to end with a usage report (OpenAI's
    ``stream_options.include_usage``), unless the client said otherwise."""
    options = chat.get("stream_options")
    if not isinstance(options, dict):
        chat["stream_options"] = {"include_usage": True}
    else:
        options.setdefault("include_usage", True)
