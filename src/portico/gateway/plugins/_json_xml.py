"""JSON → XML text for json-to-xml (an answer) and xml-to-json (a request body, without
SOAP): the reference implementation, which is ``_xml_mapping``'s (the JSON parsed by the
standard library's decoder, numbers kept as their text, the XML written by ``XmlWriter`` piece
by piece).

``_json_xml.c`` is the same function in C, compiled with the gateway's hot modules
(``portico.native.C_MODULES``) and found first while that build is current: orjson parses,
and the dicts, lists and strings it gives are walked in C, the XML bytes written directly (a
10 KB answer: see README, "What each plugin costs"). It writes the common case itself and
hands anything else to this reference (what it cannot write, a non-ASCII name, a float whose
text orjson does not keep: its docstring says which), so the two give the same bytes, or the
same refusal with the same message, for every document. This file is what runs otherwise,
and what the C module is tested against (``tests/gateway/plugins/test_json_xml.py``).
"""

from __future__ import annotations

from portico.gateway.plugins._xml_mapping import json_document_to_xml as _mapped


def json_to_xml(data: bytes, style: int, item: str, root: str) -> bytes:
    """The XML text of a JSON document: ``style`` restyles the names (``_xml_mapping``'s
    ``UNCHANGED``, ``CAMEL``, ``PASCAL``), ``item`` names the items of an array inside an
    array, ``root`` the element wrapping what is not an object of one element property.
    ValueError when it is not JSON, ``NotRepresentable`` when it cannot be written as XML."""
    if (
        not isinstance(data, bytes)
        or not isinstance(style, int)
        or not isinstance(item, str)
        or not isinstance(root, str)
    ):
        raise TypeError("json_to_xml(data: bytes, style: int, item: str, root: str)")
    return _mapped(data, style, item, root)
