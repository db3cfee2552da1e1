"""ai-proxy's configuration (pydantic models, kept out of the compiled ``runtime``: see
CONVENTIONS.md "Compiled modules").

The shape is the seed's (``provider``, ``model.source``/``model.header``, ``auth.header``),
not APISIX's: the seed says its schema endpoint, not open-source documentation, is
authoritative for AI plugins.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from portico.core.validation import invalid
from portico.gateway.plugins.base import HEADER_NAME, HttpUrl, PluginConfig

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
    keepalive: bool = Field(
        True,
        description="Reuse connections to the provider (pooled); false opens one for each "
        "request and closes it after the answer.",
    )

    secret_fields = frozenset({"auth"})

    @model_validator(mode="after")
    def _endpoint_when_needed(self) -> Self:
        if self.provider in NEEDS_ENDPOINT and self.override is None:
            invalid(
                ("override",),
                f'property "override.endpoint" is required when provider is "{self.provider}"',
            )
        return self
