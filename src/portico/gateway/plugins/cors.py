"""cors: answer preflight requests (before authentication) and add CORS response headers.

Lists are comma-separated strings, as in APISIX; ``*`` alone means any. APISIX's ``**``
("any, even with credentials") is not offered: it reflects every origin with credentials.

At run time a preflight (``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``)
is answered here with 200 and never reaches the upstream; other requests are proxied and
their response gets ``Access-Control-Allow-Origin`` (+ ``-Expose-Headers``, ``-Credentials``).
The gateway's policy replaces whatever CORS headers the upstream sent. An origin that is not
allowed gets no CORS headers at all: the request still proceeds (the browser enforces).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from typing import Self
from urllib.parse import urlsplit

from pydantic import Field, ValidationInfo, field_validator, model_validator

from portico.core.validation import invalid
from portico.gateway.context import BasePluginRuntime, Reply, RequestContext, ResponseHeaders
from portico.gateway.plugin_services import RuntimeServices
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


# every header this plugin answers with: the upstream's own are dropped before ours are set
_CORS_HEADERS = (
    "access-control-allow-origin",
    "access-control-allow-methods",
    "access-control-allow-headers",
    "access-control-max-age",
    "access-control-expose-headers",
    "access-control-allow-credentials",
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _normalise_origin(origin: str) -> str:
    """As browsers serialise an origin: lower-case scheme and host, no default port."""
    parts = urlsplit(origin.lower())
    netloc = parts.netloc
    if parts.port is not None and parts.port == _DEFAULT_PORTS.get(parts.scheme):
        netloc = netloc.rsplit(":", 1)[0]
    return f"{parts.scheme}://{netloc}"


def _is_preflight(ctx: RequestContext) -> bool:
    request = ctx.request
    return (
        request.method == "OPTIONS"
        and request.header("origin") is not None
        and request.header("access-control-request-method") is not None
    )


def _add_vary_origin(headers: ResponseHeaders) -> None:
    values = headers.get_all("vary")
    if not values:
        headers["vary"] = "Origin"
        return
    tokens = {token.strip().lower() for value in values for token in value.split(",")}
    if "origin" not in tokens and "*" not in tokens:
        headers["vary"] = ", ".join([*values, "Origin"])


class CorsRuntime(BasePluginRuntime):
    """Preflights are answered in ``access``; every CORS header is written in
    ``header_filter`` (so a 401 from a later authentication plugin is readable by the page).

    ``*`` means "any" literally only where the Fetch standard honours it: with credentials a
    browser takes ``*`` in Allow-Methods/Allow-Headers/Expose-Headers as a name, so the
    requested method and headers (and the response's header names) are listed instead. The
    ``*`` of Allow-Headers never covers ``Authorization`` in browsers, so requested headers
    are always reflected when ``allow_headers`` is ``*``.
    """

    def __init__(self, config: CorsConfig, services: RuntimeServices) -> None:
        self.any_origin = config.allow_origins == "*"
        self.origins = frozenset(
            () if self.any_origin else (_normalise_origin(o) for o in _items(config.allow_origins))
        )
        self.credentials = config.allow_credential
        self.methods = None if config.allow_methods == "*" else _joined(config.allow_methods)
        self.headers = None if config.allow_headers == "*" else _joined(config.allow_headers)
        expose = config.expose_headers
        self.expose_any = expose == "*"
        self.expose = None if expose is None or expose == "*" else _joined(expose)
        self.max_age = str(config.max_age)

    def access(self, ctx: RequestContext) -> Reply | None:
        # answered whatever the origin: a disallowed one gets a 200 without CORS headers,
        # which the browser treats as a refusal (APISIX does the same)
        return Reply(200) if _is_preflight(ctx) else None

    def header_filter(self, ctx: RequestContext, status: int, headers: ResponseHeaders) -> None:
        for name in _CORS_HEADERS:
            if name in headers:
                del headers[name]
        origin = ctx.header("origin")
        if self.any_origin:
            allowed = "*"
        else:
            _add_vary_origin(headers)  # the answer depends on the origin: tell caches
            if origin is None or origin.lower() not in self.origins:
                return
            allowed = origin
        headers["access-control-allow-origin"] = allowed
        if self.credentials:
            headers["access-control-allow-credentials"] = "true"
        if _is_preflight(ctx):
            self._preflight(ctx, headers)
        elif self.expose is not None:
            headers["access-control-expose-headers"] = self.expose
        elif self.expose_any:
            exposed = _names(headers) if self.credentials else "*"
            if exposed:
                headers["access-control-expose-headers"] = exposed

    def _preflight(self, ctx: RequestContext, headers: ResponseHeaders) -> None:
        methods = self.methods
        if methods is None:
            methods = ctx.header("access-control-request-method") if self.credentials else "*"
        if methods:
            headers["access-control-allow-methods"] = methods
        allow_headers = self.headers
        if allow_headers is None:
            requested = ctx.header("access-control-request-headers")
            allow_headers = requested if requested else (None if self.credentials else "*")
        if allow_headers:
            headers["access-control-allow-headers"] = allow_headers
        headers["access-control-max-age"] = self.max_age


def _joined(value: str) -> str:
    return ",".join(_items(value))


def _names(headers: ResponseHeaders) -> str:
    """The response's own header names, for ``expose_headers: "*"`` with credentials."""
    names = dict.fromkeys(
        name
        for name, _ in headers.items()
        if not name.startswith("access-control-") and name not in ("set-cookie", "vary")
    )
    return ",".join(names)


PLUGIN = dataclasses.replace(PLUGIN, runtime=CorsRuntime)
