"""response-rewrite: changes the response sent to the client — headers, status, body."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec
from portico.gateway.plugins.key_auth import HEADER_NAME

HeaderName = Annotated[str, Field(pattern=HEADER_NAME)]
# a value goes onto the wire verbatim: no CR/LF (header injection), no NUL
HeaderValue = Annotated[str, Field(max_length=4096, pattern=r"^[^\r\n\x00]*$")]
# "Name: value", as APISIX writes it: a list (not a map) so a header such as Set-Cookie can
# be added several times
HeaderLine = Annotated[
    str,
    Field(
        max_length=4352,
        pattern=r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}[ \t]*:[ \t]*[^\r\n\x00 \t][^\r\n\x00]*$",
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
