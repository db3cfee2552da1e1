"""json-to-xml's runtime, compiled with the data plane (``portico.native``): the shared
mediation (``_xml_mediation``) in the JSON → XML direction, its settings read once through
``MediationSettings`` when the route's chain is built."""

from __future__ import annotations

from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._xml_mediation import JSON_TO_XML, Mediation, MediationSettings


class JsonToXmlRuntime(Mediation):
    def __init__(self, config: MediationSettings, services: RuntimeServices) -> None:
        super().__init__(JSON_TO_XML, config, "", None)
