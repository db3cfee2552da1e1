"""ai-proxy: forwards chat requests to an LLM provider with the configured credentials.

The shape is the seed's (``provider``, ``model.source``/``model.header``, ``auth.header``),
not APISIX's: the seed says its schema endpoint, not open-source documentation, is
authoritative for AI plugins.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Annotated, Any, Final, Literal, Self
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from portico.core.egress import EgressGuard, EgressRefused
from portico.core.validation import invalid
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
from portico.gateway.plugins.base import HEADER_NAME, Category, HttpUrl, PluginConfig, PluginSpec

logger: Final = logging.getLogger("portico.gateway.plugins.ai_proxy")

#: providers the runtime has a driver for; the explicit list turns a typo into an error at
#: deploy instead of a 500 at the first request
Provider = Literal[
    "openai",
    "openai-compatible",
    "azure-openai",
    "anthropic",
    "deepseek",
    "mistral",
    "gemini",
    "openrouter",
]
#: providers without a well-known address: the endpoint must be configured
NEEDS_ENDPOINT = ("openai-compatible", "azure-openai")

HeaderName = Annotated[str, Field(pattern=HEADER_NAME)]
# a credential goes into a header verbatim: no CR/LF (header injection), no NUL
Credential = Annotated[str, Field(min_length=1, max_length=8192, pattern=r"^[^\r\n\x00]+$")]


class ModelSelection(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    source: Literal["config", "header"] = Field(
        "config",
        description='Where the model comes from: "config" (name, or the request body\'s '
        'model when name is unset) or "header" (a request header).',
    )
    header: str | None = Field(
        None,
        pattern=HEADER_NAME,
        description='Request header naming the model; required when source is "header".',
    )
    name: str | None = Field(
        None,
        min_length=1,
        max_length=256,
        description='Model used when source is "config" (e.g. "gpt-4o").',
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        # a field the chosen source ignores is a misunderstanding: say so rather than drop it
        if self.source == "header" and self.header is None:
            invalid(("header",), 'property "model.header" is required when source is "header"')
        if self.source == "header" and self.name is not None:
            invalid(("name",), 'model.name is only used when source is "config"', self.name)
        if self.source == "config" and self.header is not None:
            invalid(("header",), 'model.header is only used when source is "header"', self.header)
        return self


class ProviderAuth(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    header: dict[HeaderName, Credential] = Field(
        min_length=1,
        max_length=16,
        description='Headers sent to the provider, e.g. {"Authorization": "Bearer sk-..."}.',
    )


class ProviderOverride(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    endpoint: HttpUrl = Field(
        description="Full URL requests are sent to instead of the "
        "provider's default (required for openai-compatible and azure-openai)."
    )


class AiProxyConfig(PluginConfig):
    provider: Provider = Field(description="The LLM provider requests are forwarded to.")
    model: ModelSelection = Field(
        default_factory=ModelSelection, description="Which model the request is for."
    )
    auth: ProviderAuth = Field(description="Credentials presented to the provider.")
    override: ProviderOverride | None = Field(
        None, description="Overrides of the provider's defaults (its endpoint)."
    )
    timeout: int = Field(
        30_000,
        ge=1,
        le=600_000,
        description="Milliseconds to wait for the provider (generations can be slow).",
    )
    keepalive: bool = Field(True, description="Reuse connections to the provider.")

    secret_fields = frozenset({"auth"})

    @model_validator(mode="after")
    def _endpoint_when_needed(self) -> Self:
        if self.provider in NEEDS_ENDPOINT and self.override is None:
            invalid(
                ("override",),
                f'property "override.endpoint" is required when provider is "{self.provider}"',
            )
        return self


PLUGIN = PluginSpec(
    name="ai-proxy",
    category=Category.AI,
    order=430,
    reorderable=True,
    config=AiProxyConfig,
    description="Forwards chat requests to an LLM provider with the configured credentials; "
    "streams SSE responses.",
)

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


class ProviderDestination:
    """The provider's endpoint: its address, checked by the egress guard (the SSRF guard) and
    kept ``ADDRESS_TTL`` seconds, so that a request does not pay a DNS lookup."""

    def __init__(self, url: str, guard: EgressGuard, timeout_ms: int) -> None:
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
        self.checked: DirectUpstream | None = None
        self.expires = 0.0

    def current(self) -> DirectUpstream | None:
        """The checked address while it is fresh, else None (``resolve`` it)."""
        if self.checked is not None and time.monotonic() < self.expires:
            return self.checked
        return None

    async def resolve(self) -> DirectUpstream:
        """Where to send a request now (raises ``EgressRefused``)."""
        checked = self.checked
        now = time.monotonic()
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
        )
        self.expires = now + ADDRESS_TTL
        return checked


class AiProxyRuntime(BasePluginRuntime):
    """Sends the chat request to the provider instead of the route's upstream
    (``ctx.direct``: the gateway's engine forwards it and streams the answer back chunk by
    chunk, SSE included). The body gets the model (from the config, or from a request header,
    as ``model`` says); the provider gets the configured ``auth.header`` credentials, never
    the client's own. The provider down or too slow is the engine's 502/504."""

    def __init__(self, config: AiProxyConfig, services: RuntimeServices) -> None:
        endpoint = config.override.endpoint if config.override else ENDPOINTS[config.provider]
        self.destination = ProviderDestination(endpoint, services.egress, config.timeout)
        self.model_header = config.model.header if config.model.source == "header" else None
        self.model_name = config.model.name
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


def _ask_for_usage(chat: dict[str, object]) -> None:
    """Ask a streaming provider to end with a usage report (OpenAI's
    ``stream_options.include_usage``), unless the client said otherwise."""
    options = chat.get("stream_options")
    if not isinstance(options, dict):
        chat["stream_options"] = {"include_usage": True}
    else:
        options.setdefault("include_usage", True)


PLUGIN = dataclasses.replace(PLUGIN, runtime=AiProxyRuntime)
