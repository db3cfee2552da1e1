"""proxy-rewrite: rewrites what is sent upstream — the path (fixed, or by regex, typically to
strip a service's namespace prefix), the host, the method and request headers."""

from __future__ import annotations

import dataclasses
import re
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from portico.core.validation import invalid
from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import HEADER_NAME, Category, PluginConfig, PluginSpec

HeaderName = Annotated[str, Field(pattern=HEADER_NAME)]
# a value goes onto the wire verbatim: no CR/LF (header injection), no NUL
HeaderValue = Annotated[str, Field(max_length=4096, pattern=r"^[^\r\n\x00]*$")]
Method = Literal[
    "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE",
    "MKCOL", "COPY", "MOVE", "PROPFIND", "LOCK", "UNLOCK",
]  # fmt: skip
_GROUP_REF = re.compile(r"\$(\d+)|\$\{(\d+)\}")


class HeaderRewrite(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    set: dict[HeaderName, HeaderValue] | None = Field(
        None, min_length=1, max_length=64, description="Headers set, replacing any value."
    )
    add: dict[HeaderName, HeaderValue] | None = Field(
        None, min_length=1, max_length=64, description="Headers appended to existing values."
    )
    remove: list[HeaderName] | None = Field(
        None, min_length=1, max_length=64, description="Headers removed."
    )

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if self.set is None and self.add is None and self.remove is None:
            raise ValueError("headers: set at least one of set, add or remove")
        return self


class ProxyRewriteConfig(PluginConfig):
    regex_uri: list[Annotated[str, Field(min_length=1, max_length=4096)]] | None = Field(
        None,
        min_length=2,
        max_length=2,
        description="[pattern, replacement]: the path matching the pattern is replaced, "
        'with $1, $2... for its groups (e.g. ["^/orders/(.*)", "/$1"]); a path that '
        "does not match is sent unchanged.",
    )
    uri: str | None = Field(
        None, max_length=4096, pattern=r"^/", description="Fixed path sent upstream."
    )
    host: str | None = Field(
        None,
        max_length=261,
        pattern=r"^[0-9A-Za-z.-]+(:\d{1,5})?$",
        description="Host header sent upstream (host or host:port).",
    )
    method: Method | None = Field(None, description="Method sent upstream.")
    headers: HeaderRewrite | None = Field(None, description="Request header changes.")
    use_real_request_uri_unsafe: bool = Field(
        False,
        description="Send the client's raw (undecoded, unnormalised) path upstream; unsafe: "
        "it bypasses the path normalisation that path-based rules rely on.",
    )

    @model_validator(mode="after")
    def _checks(self) -> Self:
        if self.uri is not None and self.regex_uri is not None:
            invalid(("uri",), "uri and regex_uri are mutually exclusive", self.uri)
        if self.regex_uri is not None:
            _check_regex_uri(*self.regex_uri)
        changes = (self.regex_uri, self.uri, self.host, self.method, self.headers)
        if all(change is None for change in changes):
            raise ValueError("nothing to rewrite: set uri, regex_uri, host, method or headers")
        return self


def _check_regex_uri(pattern: str, replacement: str) -> None:
    try:
        groups = re.compile(pattern).groups
    except re.error as error:
        invalid(("regex_uri", 0), f"invalid regex_uri pattern: {error}", pattern)
    # a reference to a group the pattern lacks would fail on every request: refuse it now
    for match in _GROUP_REF.finditer(replacement):
        number = int(match.group(1) or match.group(2))
        if number > groups:
            invalid(
                ("regex_uri", 1),
                f"regex_uri replacement refers to ${number} but the pattern has {groups} group(s)",
                replacement,
            )


PLUGIN = PluginSpec(
    name="proxy-rewrite",
    category=Category.TRANSFORMATION,
    order=420,
    reorderable=True,
    config=ProxyRewriteConfig,
    description="Rewrites the upstream path (fixed or by regex), host, method and headers.",
)


class ProxyRewriteRuntime(BasePluginRuntime):
    """Rewrites what the upstream receives; the client's request is not changed."""

    def __init__(self, config: ProxyRewriteConfig, services: RuntimeServices) -> None:
        self.config = config
        self.pattern: re.Pattern[str] | None = None
        self.replacement = ""
        if config.regex_uri is not None:
            self.pattern = re.compile(config.regex_uri[0])
            # $1 / ${1} → the regex module's \g<1>
            self.replacement = _GROUP_REF.sub(
                lambda m: f"\\g<{m.group(1) or m.group(2)}>",
                config.regex_uri[1].replace("\\", "\\\\"),
            )

    def access(self, ctx: RequestContext) -> Reply | None:
        config = self.config
        current = ctx.upstream_path or ctx.path
        if config.uri is not None:
            ctx.upstream_path = config.uri
        elif self.pattern is not None and self.pattern.search(current):
            ctx.upstream_path = self.pattern.sub(self.replacement, current, count=1) or "/"
        if config.host is not None:
            ctx.upstream_headers["host"] = config.host
        if config.headers is not None:
            for name, value in (config.headers.set or {}).items():
                ctx.upstream_headers[name.lower()] = value
            for name, value in (config.headers.add or {}).items():
                existing = ctx.upstream_headers.get(name.lower()) or ctx.header(name)
                ctx.upstream_headers[name.lower()] = f"{existing}, {value}" if existing else value
            for name in config.headers.remove or []:
                ctx.remove_upstream_headers.add(name.lower())
        return None


PLUGIN = dataclasses.replace(PLUGIN, runtime=ProxyRewriteRuntime)
