"""The XML ↔ JSON mapping of xml-to-json and json-to-xml (``plugins._xml_mapping``): its
rules on known documents, its round trips on generated ones (Hypothesis), and the refusals of
the hardened parser (DTDs, external entities, entity expansion)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from portico.gateway.plugins import _xml_mapping as mapping
from portico.gateway.plugins._xml_parser import PARSER
from tests.support.soapservice import LAUGHS, RAW, SOAP11

# ------------------------------------------------------------------------------ the rules


def to_json(data: bytes, style: int = mapping.UNCHANGED, soap: str = "") -> Any:
    return json.loads(mapping.xml_to_json(data, style, soap))


def to_xml(value: Any, style: int = mapping.UNCHANGED) -> bytes:
    return mapping.json_to_xml(value, style, "item", "root")


def test_elements_attributes_text_and_repeated_siblings() -> None:
    document = (
        b'<order id="7" xml:lang="en"><item>a</item><note/><item>b</item>'
        b"<total> 2 </total><mixed>one <b>two</b> three</mixed></order>"
    )
    assert to_json(document) == {
        "order": {
            "@id": "7",
            "@xml:lang": "en",
            "item": ["a", "b"],  # (repeated siblings: an array, in document order)
            "note": None,  # an empty element
            "total": " 2 ",  # a leaf's text as it is
            "mixed": {"b": "two", "#text": "one  three"},
        }
    }


def test_namespaces_get_one_prefix_each_declared_on_the_top_element() -> None:
    # the same namespace under two prefixes, and one prefix for two namespaces
    document = (
        b'<a xmlns="urn:d" xmlns:p="urn:p"><p:b>1</p:b><c xmlns:q="urn:p"><q:d>2</q:d>'
        b'<p:e xmlns:p="urn:other">3</p:e></c><b p:attr="x"/></a>'
    )
    assert to_json(document) == {
        "a": {
            "@xmlns": "urn:d",
            "@xmlns:p": "urn:p",
            "@xmlns:ns1": "urn:other",
            "p:b": "1",
            "c": {"p:d": "2", "ns1:e": "3"},
            "b": {"@p:attr": "x"},
        }
    }


def test_property_naming_styles_element_and_attribute_names() -> None:
    document = (
        b'<GetQuoteResponse><URLValue item-id="1">x</URLValue><order_id>2</order_id>'
        b"</GetQuoteResponse>"
    )
    assert to_json(document, mapping.CAMEL) == {
        "getQuoteResponse": {"urlValue": {"@itemId": "1", "#text": "x"}, "orderId": "2"}
    }
    assert to_json(document, mapping.PASCAL) == {
        "GetQuoteResponse": {"URLValue": {"@ItemId": "1", "#text": "x"}, "OrderId": "2"}
    }


def test_json_to_xml_inverts_it() -> None:
    value = mapping.parse_json(
        b'{"order": {"@id": 7, "@xmlns:p": "urn:p", "p:ref": "r", "items": ["a", "b"],'
        b' "grid": [[1, 2], [3]], "price": 1.10, "big": 123456789012345678901234567890,'
        b' "paid": true, "note": null, "text": "<&>\\r", "empty": {}}}'
    )
    assert to_xml(value) == (
        b'<?xml version="1.0" encoding="UTF-8"?><order id="7" xmlns:p="urn:p"><p:ref>r</p:ref>'
        b"<items>a</items><items>b</items><grid><item>1</item><item>2</item></grid>"
        b"<grid><item>3</item></grid><price>1.10</price>"
        b"<big>123456789012345678901234567890</big><paid>true</paid><note/>"
        b"<text>&lt;&amp;&gt;&#13;</text><empty/></order>"
    )


def test_json_that_is_not_one_element_is_wrapped_in_the_root() -> None:
    assert to_xml([1, {"a": "b"}]) == (
        b'<?xml version="1.0" encoding="UTF-8"?><root><item>1</item><item><a>b</a></item></root>'
    )
    assert to_xml({"a": 1, "b": 2}).endswith(b"<root><a>1</a><b>2</b></root>")
    assert to_xml({"a": [1, 2]}).endswith(b"<root><a>1</a><a>2</a></root>")
    assert to_xml("text").endswith(b"<root>text</root>")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"first name": "x"}, '/first name: "first name" is not a valid XML name'),
        ({"a": {"p:b": 1}}, '/a/p:b: the prefix "p" is not declared'),
        ({"a": "\u0001"}, "/a: holds a character XML cannot carry"),
        ({"a": {"@x": [1]}}, "/a/@x: must be a string, number or boolean"),
        ({"a": {"#text": {"b": 1}}}, "/a/#text: must be a string, number or boolean"),
    ],
)
def test_json_that_xml_cannot_carry_is_refused_naming_where(value: Any, message: str) -> None:
    with pytest.raises(mapping.NotRepresentable, match="^" + message.replace("+", r"\+")):
        to_xml(value)


def test_json_nested_past_the_limit_is_refused() -> None:
    value: Any = "x"
    for _ in range(mapping.MAX_DEPTH + 5):
        value = {"a": value}
    with pytest.raises(mapping.NotRepresentable, match="nested more than 256 levels"):
        to_xml(value)


def test_soap_envelope_and_body() -> None:
    envelope = mapping.soap_envelope({"GetQuote": {"symbol": "X"}}, SOAP11, "item", "root")
    root = etree.fromstring(envelope)
    assert root.tag == f"{{{SOAP11}}}Envelope"
    assert to_json(envelope, soap=SOAP11) == {"GetQuote": {"symbol": "X"}}
    with pytest.raises(mapping.MalformedXml, match=r"not a SOAP 1\.1 envelope"):
        to_json(b"<a/>", soap=SOAP11)
    with pytest.raises(mapping.MalformedXml, match="has no Body"):
        to_json(RAW["soap-no-body"].encode(), soap=SOAP11)


def test_soap_12_fault() -> None:
    document = (
        f'<env:Envelope xmlns:env="{mapping.SOAP12_NS}"><env:Body><env:Fault>'
        "<env:Code><env:Value>env:Sender</env:Value></env:Code>"
        '<env:Reason><env:Text xml:lang="en">bad input</env:Text></env:Reason>'
        "<env:Detail><why>because</why></env:Detail></env:Fault></env:Body></env:Envelope>"
    ).encode()
    with pytest.raises(mapping.SoapFault) as raised:
        to_json(document, soap=mapping.SOAP12_NS)
    fault = raised.value
    assert (fault.code, fault.text, fault.detail) == ("env:Sender", "bad input", {"why": "because"})


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("xxe", "a document type declaration"),
        ("laughs", "amplification"),
        ("laughs-attribute", "amplification"),
        ("external-dtd", "the external resource 'file:///etc/passwd' is not loaded"),
        ("parameter-entity", "the external resource 'file:///etc/passwd' is not loaded"),
        ("network-dtd", "the external resource 'http://127.0.0.1:9/x.dtd' is not loaded"),
    ],
)
def test_documents_with_a_dtd_are_refused_and_nothing_external_is_read(
    name: str, message: str
) -> None:
    with pytest.raises(mapping.MalformedXml, match=message) as raised:
        mapping.parse_xml(RAW[name].encode())
    assert "root:" not in str(raised.value)  # (what /etc/passwd begins with)


def test_billion_laughs_is_refused_by_the_parser_without_expanding_it() -> None:
    # 10^9 "lol"s would be 3 GB: libxml2's amplification limit stops the parse at once
    with pytest.raises(etree.XMLSyntaxError, match="amplification"):
        etree.fromstring(LAUGHS.encode(), PARSER)
    # a small reference is parsed, and stays a reference (then parse_xml refuses the DTD)
    small = etree.fromstring(LAUGHS.replace("&lol9;", "&lol1;").encode(), PARSER)
    assert etree.tostring(small) == b"<lolz>&lol1;</lolz>"


def test_an_undeclared_entity_is_malformed() -> None:
    with pytest.raises(mapping.MalformedXml, match="not well-formed"):
        mapping.parse_xml(b"<a>&secret;</a>")


# ------------------------------------------------------------------------------ round trips

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True).filter(
    lambda name: not name.lower().startswith("xml")
)
# what XML 1.0 carries (no C0 controls but tab, LF, CR; no surrogates, no U+FFFE/U+FFFF)
XML_TEXT = st.text(
    st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters="\ufffe\uffff",
        min_codepoint=0x9,
    ).filter(lambda c: c in "\t\n\r" or ord(c) >= 0x20),
    min_size=1,
    max_size=12,
)


def json_values(depth: int) -> st.SearchStrategy[Any]:
    """JSON the mapping carries both ways: no empty string, object or array (they come
    back as null), arrays of two or more items not themselves arrays."""
    leaf = st.one_of(st.none(), XML_TEXT)
    if depth == 0:
        return leaf
    inner = json_values(depth - 1)
    children = st.dictionaries(NAMES, st.one_of(inner, st.lists(inner, min_size=2, max_size=3)))
    attributes = st.dictionaries(
        NAMES.map(lambda n: "@" + n),
        st.text(max_size=8).filter(
            lambda s: all(c in "\t\n\r" or 0x20 <= ord(c) < 0xD800 for c in s)
        ),
        max_size=2,
    )
    objects = st.tuples(attributes, children).map(lambda pair: {**pair[0], **pair[1]}).filter(bool)
    return st.one_of(leaf, objects)


@settings(max_examples=100, deadline=None)
@given(NAMES, json_values(3))
def test_json_to_xml_to_json_gives_the_json_back(name: str, value: Any) -> None:
    document = {name: value}
    assert to_json(to_xml(document)) == document


PREFIXES = {"": "urn:default", "a": "urn:a", "b": "urn:b"}


@st.composite
def xml_trees(
    draw: st.DrawFn, depth: int = 3, prefix: str | None = None, name: str | None = None
) -> Any:
    """An element (lxml), children of one name contiguous, text only in leaves, one
    prefix per namespace (the document's are kept: exclusive c14n compares them)."""
    if prefix is None:
        prefix = draw(st.sampled_from(sorted(PREFIXES)))
    if name is None:
        name = draw(NAMES)
    tag = f"{{{PREFIXES[prefix]}}}{name}"
    element = etree.Element(tag, nsmap={prefix or None: PREFIXES[prefix]})
    for key in draw(st.lists(NAMES, max_size=2, unique=True)):
        element.set(key, draw(st.text(max_size=6).filter(lambda s: s.isprintable())))
    if depth and draw(st.booleans()):
        groups = draw(
            st.lists(
                st.tuples(st.sampled_from(sorted(PREFIXES)), NAMES, st.integers(1, 3)),
                max_size=3,
                unique_by=lambda group: (group[0], group[1]),
            )
        )
        for child_prefix, child_name, count in groups:
            for _ in range(count):  # siblings of one name together
                element.append(draw(xml_trees(depth - 1, child_prefix, child_name)))
    elif draw(st.booleans()):
        element.text = draw(XML_TEXT.filter(lambda s: s.strip() == s and "\r" not in s))
    return element


def canonical(data: bytes) -> bytes:
    return etree.tostring(etree.fromstring(data), method="c14n", exclusive=True)


@settings(max_examples=100, deadline=None)
@given(xml_trees())
def test_xml_to_json_to_xml_gives_the_same_document(root: Any) -> None:
    document = etree.tostring(root)
    value = to_json(document)
    assert canonical(to_xml(value)) == canonical(document)
    assert to_json(to_xml(value)) == value
