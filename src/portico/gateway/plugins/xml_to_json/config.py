"""xml-to-json's configuration (pydantic models, kept out of the compiled ``runtime``: see
CONVENTIONS.md "Compiled modules")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from portico.gateway.plugins._xml_config import MediationConfig, MediaTypes


class SoapConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    version: Literal["1.1", "1.2"] = Field(description='SOAP version: "1.1" or "1.2".')
    action: str | None = Field(
        None,
        min_length=1,
        max_length=2048,
        # sent inside a quoted header value: printable ASCII without space, quote, backslash
        pattern=r"^[!#-\[\]-~]+$",
        description="The SOAP action: the SOAPAction header (1.1) or the action parameter "
        "of the content type (1.2) of converted requests.",
    )


class XmlToJsonConfig(MediationConfig):
    transform_request: bool = Field(
        False,
        description="Convert JSON request bodies (of request_content_types) to XML before "
        "they are forwarded (wrapped in a SOAP envelope when soap is set).",
    )
    request_content_types: MediaTypes = Field(
        ["application/json"], description="Request content types converted to XML."
    )
    content_types: MediaTypes = Field(
        ["application/xml", "text/xml"],
        description="Upstream answer content types converted to JSON (with soap, the "
        "envelope's own type too).",
    )
    soap: SoapConfig | None = Field(
        None,
        description="The upstream is a SOAP service: converted requests are wrapped in an "
        "Envelope/Body with the action; answers' Body is unwrapped, and a Fault becomes a "
        "502 problem with its code and string.",
    )

    @property
    def soap_version(self) -> str:
        return self.soap.version if self.soap is not None else ""

    @property
    def soap_action(self) -> str | None:
        return self.soap.action if self.soap is not None else None
