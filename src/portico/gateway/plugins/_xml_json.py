"""XML → JSON text for xml-to-json (an answer) and json-to-xml (a request body): the reference
implementation, which is ``_xml_mapping``'s (lxml: the document parsed into a tree, the tree
walked into dicts, the dicts written by orjson).

``_xml_json.c`` is the same function in C, compiled with the gateway's hot modules
(``portico.native.C_MODULES``) and found first while that build is current: a fast path
(``_xml_fast.cc``: pugixml, compiled in, the JSON written as its tree is walked) for the
answers it can vouch for, and for every other document libxml2's SAX2 interface into a
compact tree of its own, the JSON text written straight from it; no Python object per
element either way (a 10 KB answer: see README, "What each plugin costs"). This file is what
runs otherwise, and what the C module and each of its paths are tested against
(``tests/gateway/plugins/test_xml_json.py``: the same bytes, or the same refusal, for the same
document, style and SOAP version).

The mapping is ``_xml_mapping``'s (its docstring, README "XML ↔ JSON mediation"). The parser
is hardened in both (``_xml_parser``; the C module stops at a ``<!DOCTYPE`` before reading any
of it). What may differ between the two is only the wording of a parser's error (the C module
links the system's libxml2, lxml its own) and, for a document with a DTD, which refusal comes
first: both refuse it.
"""

from __future__ import annotations

from portico.gateway.plugins._xml_mapping import xml_to_json as _mapped


def xml_to_json(data: bytes, style: int, soap: str) -> bytes:
    """The JSON text of an XML document: ``style`` restyles the names (``_xml_mapping``'s
    ``UNCHANGED``, ``CAMEL``, ``PASCAL``); ``soap``, the envelope's namespace ("" for none),
    unwraps the Body. ``MalformedXml`` when the document cannot be read or is refused,
    ``SoapFault`` when the Body holds a Fault."""
    if not isinstance(data, bytes) or not isinstance(style, int) or not isinstance(soap, str):
        raise TypeError("xml_to_json(data: bytes, style: int, soap: str)")
    return _mapped(data, style, soap)
