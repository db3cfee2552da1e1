"""xml-to-json's runtime, compiled with the data plane (``portico.native``): the shared
mediation (``_xml_mediation``) in the XML → JSON direction, its settings read once through
``XmlToJsonSettings`` when the route's chain is built."""

from __future__ import annotations

from typing import Protocol

from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._xml_mapping import SOAP11_NS, SOAP12_NS
from portico.gateway.plugins._xml_mediation import XML_TO_JSON, Mediation, MediationSettings


class XmlToJsonSettings(MediationSettings, Protocol):
    """What the runtime reads of ``config.XmlToJsonConfig``: the shared settings and SOAP's."""

    @property
    def soap_version(self) -> str: ...

    @property
    def soap_action(self) -> str | None: ...


class XmlToJsonRuntime(Mediation):
    def __init__(self, config: XmlToJsonSettings, services: RuntimeServices) -> None:
        version = config.soap_version
        super().__init__(
            XML_TO_JSON,
            config,
            SOAP11_NS if version == "1.1" else SOAP12_NS if version == "1.2" else "",
            config.soap_action,
        )
