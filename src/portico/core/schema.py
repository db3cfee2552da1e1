"""Base classes for HTTP schemas.

The management service speaks camelCase JSON (its clients read ``gatewayHosts``,
``upstreamBindings``); Python code uses snake_case. Request schemas are strict: a string is
not an integer, and an unknown field is an error rather than silently dropped.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ReadSchema(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        serialize_by_alias=True,
        from_attributes=True,
    )


class WriteSchema(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        extra="forbid",
        strict=True,
        str_strip_whitespace=False,
    )
