"""xml-to-json: a JSON face for an XML (or SOAP) service. JSON request bodies become XML,
XML answers become JSON for clients that ask for JSON; the mapping is ``_xml_mapping``'s.

Its configuration is in ``config``; its per-request work, compiled with the data plane
(``portico.native``), in ``runtime`` and the shared ``_xml_mediation``.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.plugins.xml_to_json.config import XmlToJsonConfig
from portico.gateway.plugins.xml_to_json.runtime import XmlToJsonRuntime

PLUGIN = PluginSpec(
    name="xml-to-json",
    category=Category.TRANSFORMATION,
    order=440,
    reorderable=True,
    config=XmlToJsonConfig,
    description="Puts a JSON face on an XML or SOAP service: XML answers become JSON for "
    "clients that accept JSON, JSON request bodies become XML (in a SOAP envelope).",
    runtime=XmlToJsonRuntime,
    conflicts=("json-to-xml",),
)
