"""json-to-xml's configuration (pydantic models, kept out of the compiled ``runtime``: see
CONVENTIONS.md "Compiled modules")."""

from __future__ import annotations

from pydantic import Field

from portico.gateway.plugins._xml_config import MediationConfig, MediaTypes


class JsonToXmlConfig(MediationConfig):
    transform_request: bool = Field(
        False,
        description="Convert XML request bodies (of request_content_types) to JSON before "
        "they are forwarded.",
    )
    request_content_types: MediaTypes = Field(
        ["application/xml", "text/xml"], description="Request content types converted to JSON."
    )
    content_types: MediaTypes = Field(
        ["application/json"], description="Upstream answer content types converted to XML."
    )
