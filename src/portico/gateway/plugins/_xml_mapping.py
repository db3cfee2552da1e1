"""The XML ↔ JSON mapping that xml-to-json and json-to-xml share, compiled with the data plane
(``portico.native``): parsing XML safely, XML → JSON, JSON → XML, SOAP envelopes.

The mapping (the README's "XML ↔ JSON mapping" says it for users):

* an element is a property named as the element (``prefix:local`` when it has a namespace);
* its value is its text (a string; ``null`` for an empty element) when it has neither
  attributes nor child elements, else an object: attributes as ``@name`` properties, child
  elements as properties, the text (stripped; between children, joined) as ``#text``;
* sibling elements of one name make an array, in document order;
* every namespace gets one prefix for the whole document (the document's own where it
  declared one, ``ns1``, ``ns2``... where two namespaces claim the same prefix), declared as
  ``@xmlns`` / ``@xmlns:prefix`` on each top-level element that uses it;
* comments and processing instructions are dropped; CDATA is text.

JSON → XML is the inverse: an array property is repeated elements of the property's name,
an array inside an array is wrapped in an element whose items are ``item`` elements (the
configured ``array_item_name``), numbers and booleans are written as JSON writes them,
``null`` is an empty element, ``@name`` properties are attributes and ``#text`` the text. A
document whose JSON is not an object of exactly one element property is wrapped in a root
element (``root_element_name``).

Parsing uses lxml (libxml2) hardened (``_xml_parser``: no entity resolved, no DTD or external
resource loaded, nothing fetched); a document that carries a document type declaration at
all is then refused. README's "XML ↔ JSON mapping" gives the measured reason for
lxml rather than defusedxml.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

import orjson
from lxml import etree

from portico.gateway.plugins._xml_parser import PARSER

#: names as the mapping writes them: unchanged, camelCase, PascalCase
UNCHANGED: Final = 0
CAMEL: Final = 1
PASCAL: Final = 2

SOAP11_NS: Final = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_NS: Final = "http://www.w3.org/2003/05/soap-envelope"
XML_NS: Final = "http://www.w3.org/XML/1998/namespace"
XMLNS_NS: Final = "http://www.w3.org/2000/xmlns/"

#: how deep a JSON document may nest to be written as XML (libxml2's own limit for parsing)
MAX_DEPTH: Final = 256


class MalformedXml(Exception):
    """The XML cannot be read: not well-formed, or refused (a DTD)."""


class NotRepresentable(Exception):
    """The JSON cannot be written as XML (its message names the property at fault)."""


class SoapFault(Exception):
    """A SOAP answer whose Body is a Fault: its code, string and detail (JSON, or None)."""

    def __init__(self, code: str, text: str, detail: object) -> None:
        super().__init__(text)
        self.code = code
        self.text = text
        self.detail = detail


_PARSER: Final = PARSER
_fromstring: Final = etree.fromstring
_XMLSyntaxError: Final = etree.XMLSyntaxError
_dumps: Final = orjson.dumps


def parse_xml(data: bytes) -> Any:
    """The document's root element (lxml), or :class:`MalformedXml`."""
    try:
        root = _fromstring(data, _PARSER)
    except _XMLSyntaxError as syntax:  # (a name per except: CONVENTIONS.md "Compiled modules")
        raise MalformedXml(f"not well-formed XML: {syntax}") from None
    except ValueError as refused:  # an external resource refused, an unknown encoding...
        raise MalformedXml(f"refused: {refused}") from None
    info = root.getroottree().docinfo
    if info.doctype or info.internalDTD is not None:
        raise MalformedXml("a document type declaration (DTD) is not allowed")
    return root


# ------------------------------------------------------------------------------ names

_SEPARATORS: Final = re.compile(r"[-_.]+")
_styled_memo: Final[dict[str, str]] = {}
_MEMO_SIZE: Final = 4096


def styled(name: str, style: int) -> str:
    """``name`` in the configured style: its words (split at ``-``, ``_``, ``.``) joined,
    camelCase (``GetQuote`` → ``getQuote``, ``URLValue`` → ``urlValue``, ``order_id`` →
    ``orderId``) or PascalCase (``getQuote`` → ``GetQuote``)."""
    if style == UNCHANGED:
        return name
    key = ("c" if style == CAMEL else "p") + name
    found = _styled_memo.get(key)
    if found is not None:
        return found
    words = [word for word in _SEPARATORS.split(name) if word]
    if not words:
        out = name
    else:
        pieces: list[str] = []
        for index, word in enumerate(words):
            if index == 0 and style == CAMEL:
                pieces.append(_lower_head(word))
            else:
                pieces.append(word[0].upper() + word[1:])
        out = "".join(pieces)
    if len(_styled_memo) < _MEMO_SIZE:
        _styled_memo[key] = out
    return out


def _lower_head(word: str) -> str:
    """The leading capitals lowered, an acronym as one word: ``URLValue`` → ``urlValue``,
    ``ID`` → ``id``, ``Quote`` → ``quote``."""
    run = 0
    while run < len(word) and word[run].isupper():
        run += 1
    if run == 0:
        return word
    if run == len(word) or run == 1:
        return word[:run].lower() + word[run:]
    return word[: run - 1].lower() + word[run - 1 :]


# XML 1.0 names (NameStartChar, NameChar), without the colon: a name is NCName(:NCName)?
_START: Final = (
    "A-Z_a-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff"
)
_NCNAME: Final = f"[{_START}][{_START}\\-.0-9\u00b7\u0300-\u036f\u203f-\u2040]*"
_QNAME: Final = re.compile(f"(?:({_NCNAME}):)?{_NCNAME}")
_qname_match: Final = _QNAME.fullmatch
_name_memo: Final[dict[str, str]] = {}
# characters XML 1.0 cannot carry at all (C0 controls but tab, LF and CR; surrogates;
# U+FFFE and U+FFFF)
# (the surrogates by chr(): mypyc takes no surrogate in a string literal)
_NOT_XML: Final = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f" + chr(0xD800) + "-" + chr(0xDFFF) + "\ufffe\uffff]"
)
_not_xml_search: Final = _NOT_XML.search


def _checked_name(name: str, where: str) -> str:
    """``name`` if it is an XML name (one prefix at most); its prefix ("" for none)."""
    found = _name_memo.get(name)
    if found is not None:
        return found
    match = _qname_match(name)
    if match is None:
        raise NotRepresentable(f'{where}: "{name}" is not a valid XML name')
    prefix = match.group(1) or ""
    if len(_name_memo) < _MEMO_SIZE:
        _name_memo[name] = prefix
    return prefix


# ------------------------------------------------------------------------------ XML → JSON


class _Names:
    """The JSON names of one document's elements and attributes: each namespace gets one
    prefix for the whole document, and the namespaces each top-level element uses are
    collected for its declarations."""

    __slots__ = (
        "assigned",
        "attribute_prefixes",
        "elements",
        "next_number",
        "scope_element",
        "scope_first",
        "style",
        "taken",
        "used",
        "used_order",
    )

    def __init__(self, style: int) -> None:
        self.style = style
        #: an lxml tag ("{uri}local" or "local") → (JSON name, its namespace or "")
        self.elements: dict[str, tuple[str, str]] = {}
        #: namespace → prefix ("" for the default namespace)
        self.assigned: dict[str, str] = {}
        #: namespace → prefix for attributes when the elements' is the default one
        self.attribute_prefixes: dict[str, str] = {}
        self.used: set[str] = set()
        self.used_order: list[str] = []
        #: the prefixes of ``assigned`` and ``attribute_prefixes``; they only grow, so no
        #: ``ns<N>`` below ``next_number`` is free: a fresh prefix costs O(1), not a scan of
        #: every namespace so far (a hostile document declares thousands)
        self.taken: set[str] = set()
        self.next_number = 1
        #: the last element whose namespaces in scope were read, and for each namespace the
        #: first of its prefixes there (nsmap order): read once per element, not once per
        #: attribute (an element with thousands of them)
        self.scope_element: Any = None
        self.scope_first: dict[str, str] = {}

    def element(self, element: Any, tag: str) -> str:
        found = self.elements.get(tag)
        if found is None:
            found = self._element_name(element, tag)
            self.elements[tag] = found
        name, uri = found
        if uri and uri not in self.used:
            self.used.add(uri)
            self.used_order.append(uri)
        return name

    def _element_name(self, element: Any, tag: str) -> tuple[str, str]:
        if not tag.startswith("{"):
            return styled(tag, self.style), ""
        uri, _, local = tag[1:].partition("}")
        prefix = self._prefix(uri, element.prefix or "")
        local = styled(local, self.style)
        return (prefix + ":" + local if prefix else local), uri

    def _prefix(self, uri: str, wanted: str) -> str:
        found = self.assigned.get(uri)
        if found is not None:
            return found
        if uri == XML_NS:
            return "xml"
        prefix = self._fresh(wanted, allow_default=True)
        self.assigned[uri] = prefix
        return prefix

    def _fresh(self, wanted: str, allow_default: bool) -> str:
        """``wanted`` if no other namespace has it, else ``ns1``, ``ns2``...: taken from now
        on (the caller assigns it)."""
        taken = self.taken
        if (wanted or allow_default) and wanted not in taken and wanted != "xml":
            taken.add(wanted)
            return wanted
        number = self.next_number
        while "ns" + str(number) in taken:
            number += 1
        self.next_number = number
        fresh = "ns" + str(number)
        taken.add(fresh)
        return fresh

    def attribute(self, element: Any, key: str) -> str:
        if not key.startswith("{"):
            return "@" + styled(key, self.style)
        uri, _, local = key[1:].partition("}")
        if uri == XML_NS:
            return "@xml:" + local
        prefix = self.assigned.get(uri)
        if not prefix:  # unseen, or the elements' default namespace: attributes need one
            found = self.attribute_prefixes.get(uri)
            if found is None:
                found = self._fresh(self._scope_prefix(element, uri), allow_default=False)
                if prefix is None:
                    self.assigned[uri] = found
                else:
                    self.attribute_prefixes[uri] = found
            prefix = found
        if uri not in self.used:
            self.used.add(uri)
            self.used_order.append(uri)
        return "@" + prefix + ":" + styled(local, self.style)

    def _scope_prefix(self, element: Any, uri: str) -> str:
        """The first prefix bound to ``uri`` in ``element``'s scope (``nsmap`` order: its own
        declarations, then its parent's...), "" if none."""
        if element is not self.scope_element:
            first: dict[str, str] = {}
            for candidate, value in element.nsmap.items():
                if candidate and value not in first:
                    first[value] = candidate
            self.scope_element = element
            self.scope_first = first
        return self.scope_first.get(uri, "")

    def declarations(self) -> list[tuple[str, str]]:
        """The ``@xmlns`` properties of the namespaces used since the last call."""
        out: list[tuple[str, str]] = []
        for uri in self.used_order:
            prefix = self.assigned.get(uri, "")
            out.append(("@xmlns:" + prefix if prefix else "@xmlns", uri))
            other = self.attribute_prefixes.get(uri)
            if other is not None:
                out.append(("@xmlns:" + other, uri))
        self.used = set()
        self.used_order = []
        return out


def _value(element: Any, names: _Names) -> object:
    """An element's JSON value (see the module docstring)."""
    attributes = element.items()
    children = len(element)
    if not attributes and not children:
        return element.text  # (None for an empty element)
    out: dict[str, object] = {}
    for key, value in attributes:
        out[names.attribute(element, key)] = value
    text = element.text
    if children:
        pieces: list[str] = [text] if text else []
        for child in element:
            tag = child.tag
            name = names.element(child, tag)
            item = _value(child, names)
            if name in out:
                previous = out[name]
                if type(previous) is list:
                    previous.append(item)
                else:
                    out[name] = [previous, item]
            else:
                out[name] = item
            tail = child.tail
            if tail:
                pieces.append(tail)
        text = "".join(pieces).strip() if pieces else None
    if text:
        out["#text"] = text
    return out


def _declared(value: object, declarations: list[tuple[str, str]]) -> object:
    """A top-level element's value with its namespace declarations first."""
    if not declarations:
        return value
    out: dict[str, object] = dict(declarations)
    if isinstance(value, dict):
        out.update(value)
    elif value is not None:
        out["#text"] = value
    return out


def element_json(root: Any, style: int) -> dict[str, object]:
    """``{name: value}`` of a document's root element."""
    names = _Names(style)
    name = names.element(root, root.tag)
    value = _value(root, names)
    return {name: _declared(value, names.declarations())}


def children_json(parent: Any, style: int, names: _Names | None = None) -> dict[str, object]:
    """The child elements of ``parent`` as one object (a SOAP Body's content, a fault's
    detail), each with the declarations of the namespaces it uses."""
    if names is None:
        names = _Names(style)
    out: dict[str, object] = {}
    for child in parent:
        name = names.element(child, child.tag)
        item = _declared(_value(child, names), names.declarations())
        if name in out:
            previous = out[name]
            if type(previous) is list:
                previous.append(item)
            else:
                out[name] = [previous, item]
        else:
            out[name] = item
    return out


def xml_to_json(data: bytes, style: int, soap: str) -> bytes:
    """The JSON text of an XML document (``soap``: the envelope's namespace, "" for none:
    then the Body's content, or :class:`SoapFault`). :class:`MalformedXml` when it cannot be
    read."""
    root = parse_xml(data)
    if not soap:
        return json_text(element_json(root, style))
    return json_text(children_json(soap_body(root, soap), style))


_JSONEncodeError: Final = orjson.JSONEncodeError


def json_text(value: object) -> bytes:
    """``value`` as orjson writes it; as the standard library writes the same text when it is
    nested deeper than orjson goes (255 levels: libxml2 reads documents 256 deep)."""
    try:
        return _dumps(value)
    except _JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


# ------------------------------------------------------------------------------ SOAP


def soap_body(root: Any, namespace: str) -> Any:
    """The Body element of a SOAP envelope, or :class:`SoapFault` when it holds a Fault,
    or :class:`MalformedXml` when ``root`` is no envelope of that version."""
    version = "1.1" if namespace == SOAP11_NS else "1.2"
    if root.tag != "{" + namespace + "}Envelope":
        raise MalformedXml(f"not a SOAP {version} envelope (root element {root.tag})")
    body = None
    for child in root:
        if child.tag == "{" + namespace + "}Body":
            body = child
            break
    if body is None:
        raise MalformedXml(f"the SOAP {version} envelope has no Body")
    for child in body:
        if child.tag == "{" + namespace + "}Fault":
            raise _fault(child, namespace)
        break
    return body


def _fault(fault: Any, namespace: str) -> SoapFault:
    code = ""
    text = ""
    detail: object = None
    if namespace == SOAP11_NS:  # faultcode, faultstring, detail: unqualified
        for child in fault:
            tag = child.tag
            if tag == "faultcode":
                code = (child.text or "").strip()
            elif tag == "faultstring":
                text = (child.text or "").strip()
            elif tag == "detail":
                detail = children_json(child, UNCHANGED) if len(child) else child.text
        return SoapFault(code, text, detail)
    for child in fault:  # 1.2: Code/Value, Reason/Text, Detail
        tag = child.tag
        if tag == "{" + namespace + "}Code":
            for part in child:
                if part.tag == "{" + namespace + "}Value":
                    code = (part.text or "").strip()
        elif tag == "{" + namespace + "}Reason":
            for part in child:
                if part.tag == "{" + namespace + "}Text":
                    text = (part.text or "").strip()
                    break
        elif tag == "{" + namespace + "}Detail":
            detail = children_json(child, UNCHANGED) if len(child) else child.text
    return SoapFault(code, text, detail)


# ------------------------------------------------------------------------------ JSON → XML


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


#: numbers kept as the text they were written in (1.10 stays 1.10, big integers exact)
_DECODER: Final = json.JSONDecoder(parse_float=str, parse_int=str, parse_constant=_refuse_constant)
_decode: Final[Callable[[str], Any]] = _DECODER.decode


def parse_json(data: bytes) -> object:
    """The JSON document ``data`` (UTF-8), numbers as their text; ValueError if it is none."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    try:
        return _decode(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _escaped_text(text: str, where: str) -> str:
    if _not_xml_search(text) is not None:
        raise NotRepresentable(f"{where}: holds a character XML cannot carry")
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if "\r" in text:
        text = text.replace("\r", "&#13;")
    return text


def _escaped_attribute(text: str, where: str) -> str:
    text = _escaped_text(text, where)
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "\n" in text:
        text = text.replace("\n", "&#10;")
    if "\t" in text:
        text = text.replace("\t", "&#9;")
    return text


def _scalar_text(value: object, where: str) -> str:
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):  # (parse_json gives strings; a caller's own numbers)
        return json.dumps(value)
    raise NotRepresentable(f"{where}: must be a string, number or boolean")


class XmlWriter:
    """Writes JSON values as XML (see the module docstring); ``style`` restyles the names it
    writes, ``item`` names the items of an array inside an array."""

    __slots__ = ("item", "parts", "style")

    def __init__(self, style: int, item: str) -> None:
        self.style = style
        self.item = item
        self.parts: list[str] = []

    def text(self) -> str:
        return "".join(self.parts)

    def element(
        self, key: str, value: object, scope: frozenset[str], where: str, depth: int
    ) -> None:
        """``<key>`` holding ``value``; ``scope``: the prefixes declared around it."""
        if depth > MAX_DEPTH:
            raise NotRepresentable(f"{where}: nested more than {MAX_DEPTH} levels deep")
        prefix = _checked_name(key, where)
        name = key if self.style == UNCHANGED else self._styled(key, prefix)
        parts = self.parts
        parts.append("<")
        parts.append(name)
        if isinstance(value, dict):
            scope = self._attributes(value, scope, where)
            if prefix and prefix not in scope:
                raise NotRepresentable(f'{where}: the prefix "{prefix}" is not declared')
            parts.append(">")
            opened = len(parts)
            for child, item in value.items():
                if child.startswith("@"):
                    continue
                if child == "#text":
                    if item is not None:
                        parts.append(_escaped_text(_scalar_text(item, where + "/#text"), where))
                    continue
                self.member(child, item, scope, where + "/" + child, depth + 1)
            if len(parts) == opened:
                parts[-1] = "/>"
                return
        else:
            if prefix and prefix not in scope:
                raise NotRepresentable(f'{where}: the prefix "{prefix}" is not declared')
            if value is None:
                parts.append("/>")
                return
            parts.append(">")
            if isinstance(value, list):
                for index, item in enumerate(value):
                    self.element(self.item, item, scope, f"{where}/{index}", depth + 1)
            else:
                parts.append(_escaped_text(_scalar_text(value, where), where))
        parts.append("</")
        parts.append(name)
        parts.append(">")

    def member(
        self, key: str, value: object, scope: frozenset[str], where: str, depth: int
    ) -> None:
        """A property of an object: an array is its elements repeated."""
        if isinstance(value, list):
            for index, item in enumerate(value):
                self.element(key, item, scope, f"{where}/{index}", depth)
        else:
            self.element(key, value, scope, where, depth)

    def _styled(self, name: str, prefix: str) -> str:
        """``name`` in the writer's style, its prefix kept; as it is when the styled form
        would not be an XML name (``_1a`` → ``1a``)."""
        local = name[len(prefix) + 1 :] if prefix else name
        out = styled(local, self.style)
        if out != local and _qname_match(out) is None:
            return name
        return prefix + ":" + out if prefix else out

    def _attributes(
        self, value: dict[Any, Any], scope: frozenset[str], where: str
    ) -> frozenset[str]:
        """Writes the ``@`` properties of ``value`` as attributes; the prefixes in scope
        inside it (its own ``@xmlns:p`` declarations added)."""
        parts = self.parts
        declared: list[str] = []
        for key, item in value.items():
            if not key.startswith("@"):
                continue
            name = key[1:]
            at = where + "/" + key
            if item is None:
                continue
            if name == "xmlns" or name.startswith("xmlns:"):
                if name != "xmlns":
                    declared.append(name[6:])
                    _checked_name(name[6:], at)
                written = name
            else:
                prefix = _checked_name(name, at)
                written = name if self.style == UNCHANGED else self._styled(name, prefix)
                if prefix and prefix not in scope and prefix not in value_prefixes(value):
                    raise NotRepresentable(f'{at}: the prefix "{prefix}" is not declared')
            parts.append(" ")
            parts.append(written)
            parts.append('="')
            parts.append(_escaped_attribute(_scalar_text(item, at), at))
            parts.append('"')
        if declared:
            return scope | frozenset(declared)
        return scope


def value_prefixes(value: dict[Any, Any]) -> frozenset[str]:
    """The prefixes an object declares itself (``@xmlns:p``)."""
    return frozenset(key[7:] for key in value if key.startswith("@xmlns:"))


#: prefixes every XML document has
BASE_SCOPE: Final = frozenset({"xml"})


def json_to_xml(value: object, style: int, item: str, root: str) -> bytes:
    """The XML document of a JSON value: an object of one element property is that element,
    anything else is wrapped in ``root``. :class:`NotRepresentable` names what cannot be."""
    writer = XmlWriter(style, item)
    writer.parts.append('<?xml version="1.0" encoding="UTF-8"?>')
    if isinstance(value, dict) and len(value) == 1:
        key, content = next(iter(value.items()))
        if not key.startswith(("@", "#")) and not isinstance(content, list):
            writer.element(key, content, BASE_SCOPE, "/" + key, 1)
            return writer.text().encode()
    writer.element(root, value, BASE_SCOPE, "", 1)
    return writer.text().encode()


def json_document_to_xml(data: bytes, style: int, item: str, root: str) -> bytes:
    """The XML document of a JSON text (:func:`parse_json`, then :func:`json_to_xml`):
    ValueError if it is not JSON, :class:`NotRepresentable` if it cannot be XML."""
    return json_to_xml(parse_json(data), style, item, root)


def soap_envelope(value: object, namespace: str, item: str, root: str) -> bytes:
    """A SOAP envelope whose Body holds the JSON value: an object's properties are the
    Body's elements, anything else is wrapped in ``root``."""
    writer = XmlWriter(UNCHANGED, item)
    parts = writer.parts
    parts.append('<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="')
    parts.append(namespace)
    parts.append('"><soap:Body>')
    scope = BASE_SCOPE | frozenset({"soap"})
    if isinstance(value, dict):
        for key, content in value.items():
            if key.startswith(("@", "#")):
                raise NotRepresentable(f"/{key}: the SOAP Body holds elements only")
            writer.member(key, content, scope, "/" + key, 1)
    else:
        writer.element(root, value, scope, "", 1)
    parts.append("</soap:Body></soap:Envelope>")
    return writer.text().encode()
