"""response-rewrite: changes the response sent to the client — headers, status, body.

At run time, as APISIX does, it rewrites whatever response the client gets: the upstream's
(the upstream is still called) or one a plugin answered with. In ``header_filter``:
``status_code`` replaces the status; with ``body`` the headers describing the old body
(Content-Length, Content-Encoding, ETag, Last-Modified) are dropped and the new length is
announced; then ``headers.add``, ``headers.set``, ``headers.remove`` in that order, values
with ``$var`` / ``${var}`` resolved from the request (``\\$`` is a literal ``$``; an unknown
variable is empty). A body filter drops the upstream's chunks and sends ``body`` at the end.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from portico.gateway.context import BasePluginRuntime, RequestContext
from portico.gateway.context import ResponseHeaders as Headers
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import HEADER_NAME, Category, PluginConfig, PluginSpec

_FRAMING = frozenset({"content-length", "transfer-encoding"})
HeaderName = Annotated[str, Field(pattern=HEADER_NAME)]
# a value goes onto the wire verbatim: Latin-1 text without control characters (CR/LF would
# inject headers), as RFC 9110 allows in a field value
HeaderValue = Annotated[str, Field(max_length=4096, pattern=r"^[\t\x20-\x7e\x80-\xff]*$")]
# "Name: value", as APISIX writes it: a list (not a map) so a header such as Set-Cookie can
# be added several times
HeaderLine = Annotated[
    str,
    Field(
        max_length=4352,
        pattern=r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}[ \t]*:[ \t]*[\x21-\x7e\x80-\xff]"
        r"[\t\x20-\x7e\x80-\xff]*$",
    ),
]


class ResponseHeaders(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    set: dict[HeaderName, HeaderValue] | None = Field(
        None, min_length=1, max_length=64, description="Headers set, replacing any value."
    )
    add: list[HeaderLine] | None = Field(
        None,
        min_length=1,
        max_length=64,
        description='Headers added as "Name: value" lines, kept beside existing ones.',
    )
    remove: list[HeaderName] | None = Field(
        None, min_length=1, max_length=64, description="Headers removed."
    )

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if self.set is None and self.add is None and self.remove is None:
            raise ValueError("headers: set at least one of set, add or remove")
        # the gateway frames the body it sends: a rewritten length would cut or hang it
        names = [*(self.set or {}), *(line.split(":", 1)[0].strip() for line in self.add or [])]
        for name in names:
            if name.lower() in _FRAMING:
                raise ValueError(
                    f"headers: {name} cannot be rewritten (the gateway frames the body)"
                )
        return self


class ResponseRewriteConfig(PluginConfig):
    headers: ResponseHeaders | None = Field(None, description="Response header changes.")
    status_code: int | None = Field(
        None, ge=200, le=598, description="Status sent instead of the upstream's."
    )
    body: str | None = Field(
        None, max_length=1_048_576, description="Body sent instead of the upstream's."
    )
    body_base64: bool = Field(
        False, description="body is base64 (binary content); it is decoded before sending."
    )

    @model_validator(mode="after")
    def _checks(self) -> Self:
        if self.body_base64:
            try:
                base64.b64decode(self.body or "", validate=True)
            except binascii.Error:
                raise ValueError("body_base64 is true but body is not valid base64") from None
            if not self.body:
                raise ValueError("body_base64 is true but body is empty")
        if self.headers is None and self.status_code is None and self.body is None:
            raise ValueError("nothing to rewrite: set headers, status_code or body")
        return self


PLUGIN = PluginSpec(
    name="response-rewrite",
    category=Category.TRANSFORMATION,
    order=500,
    reorderable=True,
    config=ResponseRewriteConfig,
    description="Rewrites the response's headers, status or body.",
)


# headers that describe the upstream's body: wrong once the body is replaced
_BODY_HEADERS = ("content-length", "content-encoding", "etag", "last-modified")
# \\$ (a literal $), ${name}, $name — as APISIX's resolve_var reads them
_VAR = re.compile(r"\\\$|\$\{(\w+)\}|\$(\w+)")
# control characters (CR/LF above all) are not allowed in a header value
_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")

#: a header value: the text itself, or literal parts and variable names alternating
Template = str | tuple[str, ...]


def compile_value(value: str) -> Template:
    """Split ``value`` once, at construction: odd items of the tuple are variable names."""
    if "$" not in value:
        return value
    parts: list[str] = []
    literal, position = "", 0
    for match in _VAR.finditer(value):
        literal += value[position : match.start()]
        position = match.end()
        name = match.group(1) or match.group(2)
        if name is None:  # escaped dollar
            literal += "$"
            continue
        parts += (literal, name)
        literal = ""
    parts.append(literal + value[position:])
    return parts[0] if len(parts) == 1 else tuple(parts)


def render(template: Template, ctx: RequestContext) -> str:
    if isinstance(template, str):
        return template
    out = []
    for index, part in enumerate(template):
        if index % 2 == 0:
            out.append(part)
        else:
            value = str(ctx.status) if part == "status" else ctx.var(part)
            if value:
                out.append(_clean(value))
    return "".join(out)


def _clean(value: str) -> str:
    """A variable may come from a decoded query argument: no line break may reach the
    response head (header injection), and only Latin-1 can be written there."""
    value = _UNSAFE.sub("", value)
    if not value.isascii():
        value = value.encode("latin-1", "replace").decode("latin-1")
    return value


class ResponseRewriteRuntime(BasePluginRuntime):
    def __init__(self, config: ResponseRewriteConfig, services: RuntimeServices) -> None:
        self.status = config.status_code
        self.body: bytes | None = None
        if config.body is not None:
            self.body = (
                base64.b64decode(config.body) if config.body_base64 else config.body.encode()
            )
        self.length = str(len(self.body)) if self.body is not None else ""
        headers = config.headers
        self.add: list[tuple[str, Template]] = []
        self.set: list[tuple[str, Template]] = []
        self.remove: list[str] = []
        if headers is not None:
            for line in headers.add or []:
                name, _, value = line.partition(":")
                self.add.append((name.strip(), compile_value(value.strip())))
            for name, value in (headers.set or {}).items():
                self.set.append((name, compile_value(value)))
            self.remove = list(headers.remove or [])

    def header_filter(self, ctx: RequestContext, status: int, headers: Headers) -> None:
        if self.status is not None:
            ctx.status = self.status  # the gateway sends ctx.status
        if self.body is not None:
            for name in _BODY_HEADERS:
                headers.pop(name)
            ctx.body_filters.append(self._replace_body)
        for name, template in self.add:
            headers.add(name, render(template, ctx))
        for name, template in self.set:
            headers[name] = render(template, ctx)
        for name in self.remove:
            headers.pop(name)
        final = ctx.status
        if final < 200 or final == 204:
            headers.pop("content-length")  # such a response announces no body (RFC 9110 8.6)
        elif self.body is not None and final != 304:
            headers["content-length"] = self.length  # the body filter sends exactly this

    def _replace_body(self, ctx: RequestContext, chunk: bytes, last: bool) -> bytes:
        return self.body if last and self.body is not None else b""


PLUGIN = dataclasses.replace(PLUGIN, runtime=ResponseRewriteRuntime)
