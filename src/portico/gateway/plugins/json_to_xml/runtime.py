"""json-to-xml's runtime, compiled with the data plane (``portico.native``): the shared
mediation (``_xml_mediation``) in the JSON → XML direction, its settings read once through
``JsonToXmlSettings`` when the route's chain is built."""

from __future__ import annotations

from typing import Protocol

from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._xml_mediation import JSON_TO_XML, Mediation, style_of


class JsonToXmlSettings(Protocol):
    """What the runtime reads of ``config.JsonToXmlConfig``."""

    @property
    def transform_request(self) -> bool: ...

    @property
    def request_content_types(self) -> list[str]: ...

    @property
    def transform_response(self) -> bool: ...

    @property
    def content_types(self) -> list[str]: ...

    @property
    def property_naming(self) -> str: ...

    @property
    def array_item_name(self) -> str: ...

    @property
    def root_element_name(self) -> str: ...

    @property
    def max_body_size(self) -> int: ...


class JsonToXmlRuntime(Mediation):
    def __init__(self, config: JsonToXmlSettings, services: RuntimeServices) -> None:
        super().__init__(
            JSON_TO_XML,
            config.transform_request,
            config.request_content_types,
            config.transform_response,
            config.content_types,
            style_of(config.property_naming),
            config.array_item_name,
            config.root_element_name,
            config.max_body_size,
            "",
            None,
        )
