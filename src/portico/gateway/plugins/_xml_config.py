"""The configuration fields xml-to-json and json-to-xml share (pydantic models: kept out of
the compiled runtimes, see CONVENTIONS.md "Compiled modules")."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from portico.gateway.plugins.base import PluginConfig

#: a media type without parameters (RFC 9110 tokens)
MediaType = Annotated[
    str,
    Field(
        min_length=3,
        max_length=255,
        pattern=r"^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+$",
    ),
]
MediaTypes = Annotated[list[MediaType], Field(min_length=1, max_length=32)]

_NCNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


def _element_name(value: str) -> str:
    # (ASCII names only here: the names the gateway itself writes)
    if _NCNAME.fullmatch(value) is None or value.lower().startswith("xml"):
        raise ValueError(
            f'"{value}" is not an XML element name (a letter or _, then letters, digits, '
            '_, - or .; not starting with "xml")'
        )
    return value


ElementName = Annotated[str, Field(max_length=128), AfterValidator(_element_name)]
Naming = Literal["camelCase", "PascalCase", "unchanged"]
#: 1 MiB, the issue's default; at most 16 MiB (the body is held whole to be converted)
DEFAULT_MAX_BODY = 1_048_576
MAX_BODY_LIMIT = 16 * 1_048_576


class MediationConfig(PluginConfig):
    """Fields both directions have."""

    transform_response: bool = Field(
        True,
        description="Convert answers whose content type is one of content_types, when the "
        "client's Accept prefers the converted type to theirs.",
    )
    property_naming: Naming = Field(
        "unchanged",
        description="Style of the names in converted answers: camelCase, PascalCase, or "
        "unchanged. Converted request bodies keep their names.",
    )
    array_item_name: ElementName = Field(
        "item",
        description="Element name of the items of an array inside an array, when JSON is "
        "written as XML.",
    )
    root_element_name: ElementName = Field(
        "root",
        description="Root element wrapping JSON that is not an object of exactly one "
        "element property, when JSON is written as XML.",
    )
    max_body_size: int = Field(
        DEFAULT_MAX_BODY,
        ge=1,
        le=MAX_BODY_LIMIT,
        description="Largest body converted, in bytes: a larger request body is refused "
        "with 413, a larger answer replaced by a 502 problem; neither is held past it.",
    )
