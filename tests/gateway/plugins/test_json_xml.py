"""``plugins._json_xml``: the C module (orjson's objects walked in C, the XML written
directly) gives the same XML text as the reference (``.py``: ``_xml_mapping``'s decoder and
``XmlWriter``) for the same JSON document, style, item and root names, or the same refusal
with the same message.

The C module is the one of the current native build (``make native``); where there is none
(a checkout never built), the comparisons are skipped, the reference's own checks still run.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portico.gateway.plugins._xml_mapping import CAMEL, PASCAL, UNCHANGED, NotRepresentable
from tests.support.c_modules import implementations

MODULE = "portico.gateway.plugins._json_xml"

REFERENCE, C, IMPLEMENTATIONS = implementations(MODULE)
needs_c = pytest.mark.skipif(C is None, reason="no current native build (make native)")
STYLES = st.sampled_from([UNCHANGED, CAMEL, PASCAL])


def outcome(
    module: ModuleType, data: bytes, style: int, item: str = "item", root: str = "root"
) -> tuple[str, Any]:
    """What a conversion gives: its XML text, or its refusal (the kind and message)."""
    try:
        return ("xml", module.json_to_xml(data, style, item, root))
    except NotRepresentable as refused:
        return ("not representable", str(refused))
    except ValueError as not_json:
        return ("not json", str(not_json))


def same(data: bytes, style: int = UNCHANGED, item: str = "item", root: str = "root") -> Any:
    """The outcome of both modules, which must be the same."""
    expected = outcome(REFERENCE, data, style, item, root)
    if C is not None:
        assert outcome(C, data, style, item, root) == expected, data
    return expected


# ------------------------------------------------------------------------------ generated

# names: valid ones the styles split (-, _, .), acronyms, prefixed ones (declared or not),
# ones XML refuses, non-ASCII ones (the C module hands those to the reference), the keys the
# mapping reads (@attributes, #text, xmlns declarations)
NAMES = st.sampled_from(
    ["a", "b", "item", "order-id", "order_id", "x.y.z", "URLValue", "ID", "getQuote", "_", "a-",
     "_1a", "-a", "1a", "first name", "", "p:a", "q:b", "p:", ":a", "a:b:c", "xml:lang", "é",
     "Ünïcode-name", "Body", "#text", "#other", "@x", "@p:x", "@q:y", "@", "@1", "@xmlns",
     "@xmlns:p", "@xmlns:q", "@xmlns:", "@xmlnsx", "@ID", "@order_id"]
)  # fmt: skip
STRINGS = st.one_of(
    st.text(st.sampled_from("ab &<>\"'\r\n\t\x01\x1f\x7fé😀\ufffe\uffff\u2028"), max_size=8),
    st.sampled_from(["-0", "1.10", "x"]),
)
NUMBERS = st.sampled_from(
    ["0", "-0", "7", "-12", "1.10", "1E5", "2.5e-3", "-0.0", "9223372036854775807",
     "9223372036854775808", "18446744073709551616", "123456789012345678901234567890"]
)  # fmt: skip
SCALARS = st.one_of(STRINGS.map(json.dumps), NUMBERS, st.sampled_from(["true", "false", "null"]))


# names the C module writes itself: valid ASCII ones, the prefixed ones declared at the top
# (``documents`` declares p and q on the root element)
WRITTEN_NAMES = st.sampled_from(
    ["a", "b", "item", "order-id", "order_id", "x.y.z", "URLValue", "ID", "getQuote", "_",
     "a-", "_1a", "p:a", "q:URL_value", "xml:lang", "#text", "@x", "@p:x", "@q:Y-z", "@ID",
     "@order_id", "@xmlns:r", "@xmlns"]
)  # fmt: skip


def objects(
    children: st.SearchStrategy[str], names: st.SearchStrategy[str] = NAMES
) -> st.SearchStrategy[str]:
    return st.lists(st.tuples(names, children), max_size=5).map(
        lambda pairs: "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in pairs) + "}"
    )


def arrays(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(children, max_size=4).map(lambda items: "[" + ",".join(items) + "]")


# JSON texts (duplicate keys and all), written out so that numbers keep their text
DOCUMENTS = st.recursive(
    SCALARS, lambda children: st.one_of(objects(children), arrays(children)), max_leaves=30
)
WRITTEN_SCALARS = st.one_of(
    st.text(st.sampled_from("ab &<>\"'\r\n\té😀\u2028"), max_size=8).map(json.dumps),
    st.sampled_from(["0", "7", "-12", "9223372036854775807", "true", "false", "null"]),
)
# documents the C module writes without the reference (no float, no -0, valid names)
WRITTEN = st.recursive(
    WRITTEN_SCALARS,
    lambda children: st.one_of(objects(children, WRITTEN_NAMES), arrays(children)),
    max_leaves=30,
).map(lambda inner: '{"p:doc": {"@xmlns:p": "urn:p", "@xmlns:q": "urn:q", "p:in": ' + inner + "}}")


@needs_c
@settings(max_examples=400, deadline=None)
@given(DOCUMENTS, STYLES, st.sampled_from(["item", "entry"]), st.sampled_from(["root", "Doc"]))
def test_the_c_module_gives_the_references_xml_or_refusal(
    text: str, style: int, item: str, root: str
) -> None:
    same(text.encode(), style, item, root)


@needs_c
@settings(max_examples=300, deadline=None)
@given(WRITTEN, STYLES, st.sampled_from(["item", "array-item"]))
def test_the_c_module_writes_valid_documents_as_the_reference(
    text: str, style: int, item: str
) -> None:
    same(text.encode(), style, item)


@needs_c
@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=24) | st.text(max_size=12).map(str.encode))
def test_the_c_module_refuses_what_is_not_json_as_the_reference(data: bytes) -> None:
    same(data)


# ------------------------------------------------------------------------------ known cases


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_the_mapping_on_a_known_document(module: ModuleType) -> None:
    data = (
        b'{"order": {"@id": 7, "@xmlns:p": "urn:p", "@note": "a\\"b\\n", "p:ref": "r",'
        b' "items": ["a", "b"], "grid": [[1, 2], [3]], "price": 1.10, "zero": -0,'
        b' "big": 123456789012345678901234567890, "paid": true, "none": null,'
        b' "text": "<&>\\r", "empty": {}, "mixed": {"#text": "t", "b": false}, "none_at_all": []}}'
    )
    assert module.json_to_xml(data, UNCHANGED, "item", "root") == (
        b'<?xml version="1.0" encoding="UTF-8"?>'
        b'<order id="7" xmlns:p="urn:p" note="a&quot;b&#10;"><p:ref>r</p:ref>'
        b"<items>a</items><items>b</items><grid><item>1</item><item>2</item></grid>"
        b"<grid><item>3</item></grid><price>1.10</price><zero>-0</zero>"
        b"<big>123456789012345678901234567890</big><paid>true</paid><none/>"
        b"<text>&lt;&amp;&gt;&#13;</text><empty/><mixed>t<b>false</b></mixed></order>"
    )
    same(data)


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_names_are_styled_prefix_kept(module: ModuleType) -> None:
    data = b'{"Get_Quote": {"@xmlns:Ns": "u", "@item-id": 1, "Ns:URLValue": [[2]], "_1a": 3}}'
    assert module.json_to_xml(data, CAMEL, "array-item", "root") == (
        b'<?xml version="1.0" encoding="UTF-8"?><getQuote xmlns:Ns="u" itemId="1">'
        b"<Ns:urlValue><arrayItem>2</arrayItem></Ns:urlValue><_1a>3</_1a></getQuote>"
    )
    assert module.json_to_xml(b'["x"]', PASCAL, "item", "doc") == (
        b'<?xml version="1.0" encoding="UTF-8"?><Doc><Item>x</Item></Doc>'
    )


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"first name": "x"}', '/first name: "first name" is not a valid XML name'),
        (b'{"a": {"p:b": 1}}', '/a/p:b: the prefix "p" is not declared'),
        (b'{"a": {"@p:b": 1}}', '/a/@p:b: the prefix "p" is not declared'),
        (b'{"a": {"@xmlns:": "u"}}', '/a/@xmlns:: "" is not a valid XML name'),
        (b'{"a": "\\u0001"}', "/a: holds a character XML cannot carry"),
        (b'{"a": "\\ud800"}', "/a: holds a character XML cannot carry"),
        (b'{"a": {"@x": "\\uffff"}}', "/a/@x: holds a character XML cannot carry"),
        (b'{"a": {"@x": [1]}}', "/a/@x: must be a string, number or boolean"),
        (b'{"a": {"#text": {"b": 1}}}', "/a/#text: must be a string, number or boolean"),
        (
            '{"a": [{"b": [["c", {"é x": 1}]]}]}'.encode(),
            '/a/0/b/0/1/é x: "é x" is not a valid XML name',
        ),
        (b'[{"a": 1}, {"@b": [2]}]', "/1/@b: must be a string, number or boolean"),
        (b'[{"a": 1}, 2.5, {"#x": 1}]', '/2/#x: "#x" is not a valid XML name'),
        (b'{"a":' * 300 + b'"x"' + b"}" * 300, "nested more than 256 levels deep"),
    ],
)
def test_json_xml_cannot_carry_is_refused_naming_where(
    module: ModuleType, data: bytes, message: str
) -> None:
    with pytest.raises(NotRepresentable) as refused:
        module.json_to_xml(data, UNCHANGED, "item", "root")
    assert message in str(refused.value)
    same(data)


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "Expecting value: line 1 column 1"),
        (b'{"a": ', "Expecting value"),
        (b'{"a": NaN}', "NaN is not JSON"),
        (b'{"a": 1} x', "Extra data"),
        (b'"\xff"', "not UTF-8"),
        (b"[" * 5000 + b"]" * 5000, "nested too deeply"),
    ],
)
def test_what_is_not_json_is_refused_with_the_references_reason(
    module: ModuleType, data: bytes, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        module.json_to_xml(data, UNCHANGED, "item", "root")
    same(data)


@needs_c
@pytest.mark.parametrize(
    "data",
    [
        b'{"a": 1.5, "b": [0, -0, 1e2]}',  # numbers parsed again as their text
        b'{"a": [7, -0, 0]}',  # -0 is read as 0 by orjson
        b'{"a": [1e400, "\\ud83d\\ude00"]}',  # orjson takes no infinite number
        b'{"a": "x", "b": 1.0, "a": 1.00}',  # duplicate keys: the last value, the first place
        b'{"a": 18446744073709551616}',  # past orjson's integers
        b'{"\xc3\xa9": {"@\xc3\xa9": "1"}}',  # non-ASCII names: the reference's
        b'{"a": {' + b",".join(b'"@xmlns:p%d": "u"' % n for n in range(100)) + b', "p99:b": 1}}',
        b'{"p:a": {"@xmlns:p": "u", "@p:b": "1", "p:c": {"@p:d": "2"}}}',
    ],
)
def test_the_c_module_hands_its_unusual_cases_to_the_reference(data: bytes) -> None:
    for style in (UNCHANGED, CAMEL, PASCAL):
        assert same(data, style)[0] == "xml"


@needs_c
def test_the_c_module_rejects_wrong_arguments() -> None:
    assert C is not None
    with pytest.raises(TypeError, match="json_to_xml"):
        C.json_to_xml("{}", UNCHANGED, "item", "root")


@needs_c
def test_long_names_are_written_as_the_reference() -> None:
    """Names past the C module's cache of written names (56 bytes) and past its styling
    buffer (256: the reference's case)."""
    for length in (55, 57, 120, 255, 257, 400):
        long = "p:" + "Long_name-" * (length // 10) + "x" * (length % 10)
        other = "Other.NAME_" * (length // 11)
        data = json.dumps(
            {long: {"@xmlns:p": "u", "@" + other: "1", other: [{long: "x"}, [long]]}}
        ).encode()
        for style in (UNCHANGED, CAMEL, PASCAL):
            assert same(data, style)[0] == "xml"
