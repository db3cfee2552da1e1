"""cors: answer preflight requests (before authentication) and add CORS response headers.

Lists are comma-separated strings, as in APISIX; ``*`` alone means any. APISIX's ``**``
("any, even with credentials") is not offered: it reflects every origin with credentials.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Self
from urllib.parse import urlsplit

from pydantic import Field, ValidationInfo, field_validator, model_validator

from portico.core.validation import invalid
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec

_TOKEN = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}")  # RFC 9110: methods, header names
_HOSTNAME = re.compile(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?")


def _items(value: str) -> list[str]:
    return [item.strip() for item in value.split(",")]


def _is_origin(origin: str) -> bool:
    """``scheme://host[:port]`` exactly: no path, credentials or wildcard host."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return False
    host = parts.hostname or ""
    if not parts.scheme or origin != f"{parts.scheme}://{parts.netloc}" or port == 0:
        return False
    if "@" in parts.netloc:
        return False
    if parts.netloc.startswith("["):
        try:
            return ipaddress.ip_address(host).version == 6
        except ValueError:
            return False
    return _HOSTNAME.fullmatch(host) is not None


class CorsConfig(PluginConfig):
    allow_origins: str = Field(
        "*",
        min_length=1,
        max_length=4096,
        description='Comma-separated origins (scheme://host[:port]) allowed, or "*" for any.',
    )
    allow_methods: str = Field(
        "*",
        min_length=1,
        max_length=1024,
        description='Comma-separated methods allowed (e.g. "GET,POST"), or "*" for any.',
    )
    allow_headers: str = Field(
        "*",
        min_length=1,
        max_length=4096,
        description='Comma-separated request headers allowed, or "*" for any.',
    )
    expose_headers: str | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description='Comma-separated response headers scripts may read, or "*"; none if unset.',
    )
    max_age: int = Field(
        5,
        ge=-1,
        le=86_400,
        description="Seconds a browser may cache the preflight answer; -1 disables caching.",
    )
    allow_credential: bool = Field(
        False, description="Allow cookies and authorization headers on cross-origin requests."
    )

    @field_validator("allow_origins")
    @classmethod
    def _origins(cls, value: str) -> str:
        if value == "*":
            return value
        for origin in _items(value):
            if origin == "*":
                raise ValueError('allow_origins: "*" cannot be combined with other origins')
            if not _is_origin(origin):
                raise ValueError(
                    f'allow_origins: "{origin}" is not an origin (scheme://host[:port])'
                )
        return value

    @field_validator("allow_methods", "allow_headers", "expose_headers")
    @classmethod
    def _tokens(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or value == "*":
            return value
        kind = "an HTTP method" if info.field_name == "allow_methods" else "a header name"
        for item in _items(value):
            if not _TOKEN.fullmatch(item) or item == "*":
                raise ValueError(f'{info.field_name}: "{item}" is not {kind}')
        return value

    @model_validator(mode="after")
    def _credentials_need_origins(self) -> Self:
        # the Fetch standard ignores "*" with credentials; APISIX refuses the combination
        if self.allow_credential and self.allow_origins == "*":
            invalid(
                ("allow_origins",),
                'allow_origins "*" cannot be used when allow_credential is true: '
                "list the allowed origins",
            )
        return self


PLUGIN = PluginSpec(
    name="cors",
    category=Category.SECURITY,
    order=30,
    reorderable=False,
    config=CorsConfig,
    description="Answers CORS preflight requests before authentication and adds the "
    "Access-Control-* headers for the allowed origins, methods and headers.",
)
