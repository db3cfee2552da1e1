"""json-to-xml: an XML face for a JSON service. JSON answers become XML for clients that
ask for XML, XML request bodies become JSON; the mapping is ``_xml_mapping``'s, inverted.

Its configuration is in ``config``; its per-request work, compiled with the data plane
(``portico.native``), in ``runtime`` and the shared ``_xml_mediation``.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.plugins.json_to_xml.config import JsonToXmlConfig
from portico.gateway.plugins.json_to_xml.runtime import JsonToXmlRuntime

PLUGIN = PluginSpec(
    name="json-to-xml",
    category=Category.TRANSFORMATION,
    order=441,
    reorderable=True,
    config=JsonToXmlConfig,
    description="Puts an XML face on a JSON service: JSON answers become XML for clients "
    "that accept XML, XML request bodies become JSON.",
    runtime=JsonToXmlRuntime,
    conflicts=("xml-to-json",),
)
