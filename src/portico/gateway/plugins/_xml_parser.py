"""The XML parser of xml-to-json and json-to-xml: lxml (libxml2) hardened. Interpreted (its
resolver subclasses lxml's, which compiled code cannot): ``_xml_mapping`` uses ``PARSER``.

* entities are never resolved (``resolve_entities=False``): a billion-laughs document keeps
  its references unexpanded, and libxml2's amplification limit refuses one that would
  expand them in an attribute value;
* no DTD is loaded nor validated, nothing is fetched over the network;
* every external resource libxml2 would still read (an external DTD subset, a parameter
  entity: libxml2 opens local files for those even with DTD loading off, measured) goes
  through ``_Refuse``, which refuses it: no file is opened;
* libxml2's default limits stay on (no ``huge_tree``: depth, text size).

``_xml_mapping.parse_xml`` also refuses any document that has a document type declaration.
"""

from __future__ import annotations

from typing import Any

from lxml import etree


class ExternalResourceRefused(ValueError):
    """The document asked for an external resource (a DTD, an entity): never loaded."""


class _Refuse(etree.Resolver):  # type: ignore[misc]
    def resolve(self, url: str | None, public_id: str | None, context: Any) -> Any:
        raise ExternalResourceRefused(f"the external resource {url!r} is not loaded")


def hardened_parser() -> Any:
    parser = etree.XMLParser(
        resolve_entities=False,
        load_dtd=False,
        dtd_validation=False,
        no_network=True,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
    )
    parser.resolvers.add(_Refuse())
    return parser


#: one for the process: the event loop's thread is the only one that parses
PARSER = hardened_parser()
