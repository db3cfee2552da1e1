"""``plugins._xml_json``: the C module (libxml2's SAX2 parser, JSON written straight from its
own tree) gives the same JSON text as the reference (``.py``: lxml, ``_xml_mapping``) for the
same document, style and SOAP version, or the same refusal; and it refuses hostile documents
(a DTD, external or expanding entities, deep nesting, a huge text, thousands of namespaces)
at once, without reading or expanding anything.

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

from portico.gateway.plugins._xml_mapping import (
    CAMEL,
    PASCAL,
    SOAP11_NS,
    SOAP12_NS,
    UNCHANGED,
    MalformedXml,
    SoapFault,
)
from tests.support.c_modules import implementations
from tests.support.soapservice import RAW

MODULE = "portico.gateway.plugins._xml_json"


REFERENCE, C, IMPLEMENTATIONS = implementations(MODULE)
needs_c = pytest.mark.skipif(C is None, reason="no current native build (make native)")


def outcome(module: ModuleType, data: bytes, style: int, soap: str) -> tuple[Any, ...]:
    """What a conversion gives: its JSON text, or its refusal (a fault with its fields)."""
    try:
        return ("json", module.xml_to_json(data, style, soap))
    except SoapFault as fault:
        return ("fault", fault.code, fault.text, fault.detail)
    except MalformedXml:
        return ("malformed",)


def strict(module: ModuleType) -> ModuleType:
    """The C module's strict path alone (libxml2), as a module: xml_to_json."""
    return type("Strict", (), {"xml_to_json": staticmethod(module.strict_to_json)})  # type: ignore[return-value]


def same(data: bytes, style: int = UNCHANGED, soap: str = "") -> tuple[Any, ...]:
    """The outcome of both modules, which must be the same: the C module's, and each of its
    two paths' (the fast one where it does not decline)."""
    expected = outcome(REFERENCE, data, style, soap)
    if C is not None:
        assert outcome(C, data, style, soap) == expected, data
        assert outcome(strict(C), data, style, soap) == expected, data
        fast = C.fast_to_json(data, style, soap)
        if fast is not None:
            assert ("json", fast) == expected, data
    return expected


# ------------------------------------------------------------------------------ generated

# names the styles split (-, _, .), acronyms, non-ASCII ones (the C module asks the
# reference's styled() for those)
NAMES = st.sampled_from(
    ["a", "b", "item", "order-id", "order_id", "x.y.z", "URLValue", "ID", "getQuote", "_", "a-",
     "é", "Ünïcode-name", "Body", "Fault", "detail", "n1"]
)  # fmt: skip
PREFIXES = st.sampled_from(["p", "q", "soap", "ns1", "xml2"])
URIS = st.sampled_from(["urn:a", "urn:b", "urn:c", SOAP11_NS, SOAP12_NS])
# text as it is written: plain characters (str.strip()'s whitespace among them, non-ASCII,
# astral), the five entities, character references
TEXT_PIECES = st.one_of(
    st.text(st.sampled_from(" \t\n\r\xa0\u3000\u2028ab\"'>é😀"), max_size=6),
    st.sampled_from(["&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#38;", "&#x1F600;", "&#13;",
                     "&#9;", "&#160;", "&#x3000;", "x&#38;y"]),
)  # fmt: skip
TEXT = st.lists(TEXT_PIECES, max_size=3).map("".join)
ATTRIBUTE_VALUE = TEXT.map(lambda text: text.replace('"', "&quot;"))


@st.composite
def elements(draw: st.DrawFn, depth: int, scope: frozenset[str]) -> str:
    """An element as XML text: namespace declarations (one prefix for two namespaces, two
    prefixes for one, the default one), namespaced and plain attributes, text, CDATA,
    comments and processing instructions between repeated and interleaved children."""
    declared = draw(st.lists(st.tuples(PREFIXES | st.just(""), URIS), max_size=2))
    declared = list(dict(declared).items())  # (one declaration per prefix)
    inner = scope | {prefix for prefix, _ in declared if prefix}
    prefix = draw(st.sampled_from(["", *sorted(inner)]))
    tag = f"{prefix}:{draw(NAMES)}" if prefix else draw(NAMES)
    parts = ["<", tag]
    for name, uri in declared:
        parts.append(f' xmlns:{name}="{uri}"' if name else f' xmlns="{uri}"')
    attributes: set[str] = set()
    for _ in range(draw(st.integers(0, 3))):
        attribute_prefix = draw(st.sampled_from(["", "", "xml", *sorted(inner)]))
        name = draw(NAMES)
        key = f"{attribute_prefix}:{name}" if attribute_prefix else name
        if key not in attributes:  # (a repeated one is an error: tried elsewhere)
            attributes.add(key)
            parts.append(f' {key}="{draw(ATTRIBUTE_VALUE)}"')
    if draw(st.integers(0, 5)) == 0:
        parts.append("/>")
        return "".join(parts)
    parts.append(">")
    children = draw(st.integers(0, 4)) if depth > 0 else 0
    for index in range(children + 1):
        kind = draw(st.integers(0, 9))
        if kind < 6:
            parts.append(draw(TEXT))
        elif kind == 6:
            parts.append(f"<![CDATA[{draw(TEXT)}]]>")
        elif kind == 7:
            parts.append("<!-- a comment -->")
        elif kind == 8:
            parts.append("<?pi data?>")
        if index < children:
            parts.append(draw(elements(depth - 1, inner)))
    parts.append(f"</{tag}>")
    return "".join(parts)


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """A document, well-formed or not: a prolog (declaration, comments, PIs, whitespace),
    the root, what follows it; sometimes cut short or given a stray character."""
    head = draw(
        st.sampled_from(["", '<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-8"?>\n'])
    )
    before = draw(st.sampled_from(["", "\n", "<!-- c --> ", "<?pi x?>"]))
    after = draw(st.sampled_from(["", "", "", "\n", "<!-- c -->", "tail", "<b/>"]))
    text = head + before + draw(elements(3, frozenset())) + after
    damage = draw(st.integers(0, 19))
    if damage == 0:
        text = text[: draw(st.integers(1, len(text)))]
    elif damage == 1:
        at = draw(st.integers(0, len(text)))
        stray = draw(st.sampled_from(["<", "&", ">", "\x01", "]]>", '"', "&undeclared;"]))
        text = text[:at] + stray + text[at:]
    return text.encode()


STYLES = st.sampled_from([UNCHANGED, CAMEL, PASCAL])


@needs_c
@settings(max_examples=250, deadline=None)
@given(documents(), STYLES)
def test_the_c_module_gives_the_references_json_or_refusal(data: bytes, style: int) -> None:
    result = same(data, style)
    if result[0] == "json":
        json.loads(result[1])  # (and it is JSON)


@st.composite
def envelopes(draw: st.DrawFn) -> tuple[bytes, str]:
    """A SOAP 1.1 or 1.2 envelope (sometimes the other version's, or none) whose Body holds
    generated elements, or a Fault with its code, string and detail."""
    namespace = draw(st.sampled_from([SOAP11_NS, SOAP12_NS]))
    written = draw(st.sampled_from([namespace, namespace, "urn:a"]))
    content = "".join(draw(st.lists(elements(2, frozenset({"s"})), max_size=3)))
    detail = draw(st.sampled_from(["", "<detail/>", "<detail> why </detail>"])) + (
        "<detail>" + content + "</detail>" if draw(st.booleans()) else ""
    )
    if draw(st.integers(0, 2)) == 0:
        if namespace == SOAP11_NS:
            content = (
                f"<s:Fault><faultcode> s:Client </faultcode><faultstring>{draw(TEXT)}"
                f"</faultstring>{detail}</s:Fault>" + content
            )
        else:
            content = (
                "<s:Fault><s:Code><s:Value>s:Sender</s:Value></s:Code><s:Reason>"
                f"<s:Text>{draw(TEXT)}</s:Text><s:Text>second</s:Text></s:Reason>"
                f"{detail.replace('detail', 's:Detail')}</s:Fault>" + content
            )
    header = draw(st.sampled_from(["", "<s:Header><h>1</h></s:Header>"]))
    body = "" if draw(st.integers(0, 9)) == 0 else f"<s:Body>{content}</s:Body>"
    return (f'<s:Envelope xmlns:s="{written}">{header}{body}</s:Envelope>').encode(), namespace


@needs_c
@settings(max_examples=120, deadline=None)
@given(envelopes(), STYLES)
def test_the_c_module_unwraps_soap_bodies_and_faults_as_the_reference(
    envelope: tuple[bytes, str], style: int
) -> None:
    data, namespace = envelope
    same(data, style, namespace)


# ------------------------------------------------------------------------------ known documents


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_the_mapping_on_a_known_document(module: ModuleType) -> None:
    document = (
        b'<?xml version="1.0"?><order xmlns="urn:d" xmlns:p="urn:p" id="7" xml:lang="en">'
        b"<item>a &amp; b</item><note/><p:item>x</p:item><item><![CDATA[<c>]]></item>"
        b'<mixed>one <b>two</b> three</mixed><order-line p:n="1"/></order>'
    )
    assert json.loads(module.xml_to_json(document, CAMEL, "")) == {
        "order": {
            "@xmlns": "urn:d",
            "@xmlns:p": "urn:p",
            "@id": "7",
            "@xml:lang": "en",
            "item": ["a & b", "<c>"],
            "note": None,
            "p:item": "x",
            "mixed": {"b": "two", "#text": "one  three"},
            "orderLine": {"@p:n": "1"},
        }
    }


def quotes(count: int = 58, indent: str = "") -> bytes:
    """A stock service's answer, as bench/plugins/xml.py's (10 KB), optionally indented."""
    quote = (
        '{i}<Quote currency="EUR" exchange="XLIS">{i}{i}<Symbol>SYM{n}</Symbol>'
        "{i}{i}<Name>Company number {n} &amp; Sons, Ltd.</Name><Price>{n}.25</Price>{i}</Quote>"
    )
    body = "".join(quote.format(i=indent, n=n) for n in range(count))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<ListQuotesResponse xmlns="urn:example:quotes">{body}\n</ListQuotesResponse>'
    ).encode()


@needs_c
@pytest.mark.parametrize(
    ("data", "soap"),
    [
        (quotes(), ""),
        (quotes(indent="\n  "), ""),
        (
            b'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"'
            b' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soap:Header/><soap:Body>'
            b'<q:GetQuoteResponse xmlns:q="urn:quotes"><q:Price xsi:type="decimal">1.10'
            b"</q:Price><!-- c --><q:At>&#x32;026</q:At></q:GetQuoteResponse></soap:Body>"
            b"</soap:Envelope>",
            SOAP11_NS,
        ),
        (b'<a xml:lang="en" b="&lt;&#13;\t"><![CDATA[]]></a>', ""),
        (b'<a xmlns="urn:a">&gt; 1</a>', ""),  # a text whose namespace is declared on it
        (b'<a xmlns="urn:a"/>', ""),
        (b'<a xmlns="urn:a"><b>1</b><b>2</b><c><b/><b/></c></a>', ""),
        (quotes(8000), ""),  # (1.1 MB: its buffers are given back after each call)
    ],
    ids=lambda value: str(value)[:30] if isinstance(value, bytes) else None,
)
def test_the_fast_path_converts_the_usual_answers(data: bytes, soap: str) -> None:
    # the fast path (pugixml) declines what it cannot vouch for, which the strict path
    # (libxml2) then converts: both give the same JSON; this is the fast path's own, for
    # the documents it is there for
    assert C is not None
    for style in (UNCHANGED, CAMEL, PASCAL):
        fast = C.fast_to_json(data, style, soap)
        assert fast is not None
        assert ("json", fast) == same(data, style, soap)


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_a_fault_is_raised_with_its_code_string_and_detail(module: ModuleType) -> None:
    document = (
        f'<s:Envelope xmlns:s="{SOAP11_NS}"><s:Body><s:Fault><faultcode>s:Client</faultcode>'
        "<faultstring> no such quote </faultstring><detail><why>unknown</why></detail>"
        "</s:Fault></s:Body></s:Envelope>"
    ).encode()
    with pytest.raises(SoapFault) as raised:
        module.xml_to_json(document, UNCHANGED, SOAP11_NS)
    fault = raised.value
    assert (fault.code, fault.text, fault.detail) == (
        "s:Client",
        "no such quote",
        {"why": "unknown"},
    )


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_a_bad_argument_is_a_type_error(module: ModuleType) -> None:
    with pytest.raises(TypeError):
        module.xml_to_json("<a/>", UNCHANGED, "")
    with pytest.raises(TypeError):
        module.xml_to_json(b"<a/>", "camel", "")


# ------------------------------------------------------------------------------ hostile documents


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
@pytest.mark.parametrize(
    "name", ["xxe", "external-dtd", "network-dtd", "parameter-entity", "laughs", "laughs-attribute"]
)
def test_dtds_and_entities_are_refused_without_reading_or_expanding(
    module: ModuleType, name: str
) -> None:
    with pytest.raises(MalformedXml) as raised:
        module.xml_to_json(RAW[name].encode(), UNCHANGED, "")
    message = str(raised.value)
    assert "root:" not in message  # (nothing of /etc/passwd)
    assert any(
        reason in message for reason in ("(DTD) is not allowed", "is not loaded", "amplification")
    ), message


@needs_c
def test_the_c_module_stops_at_the_doctype_before_reading_any_of_it() -> None:
    assert C is not None
    # an internal subset it would have to parse to expand: stopped before "[", so the
    # refusal is the DTD's, not a parse of ten levels of entities
    for data in (RAW["laughs"], RAW["xxe"], '<!DOCTYPE a PUBLIC "-//x" "file:///dev/zero"><a/>'):
        with pytest.raises(MalformedXml, match=r"\(DTD\) is not allowed"):
            C.xml_to_json(data.encode(), UNCHANGED, "")


@pytest.mark.parametrize(
    ("data", "refused"),
    [
        (b"<a>&secret;</a>", True),  # an entity no DTD declared
        (b'<a b="&secret;"/>', True),
        (b"<a>" * 255 + b"</a>" * 255, False),
        (b"<a>" * 256 + b"</a>" * 256, False),  # libxml2's limit...
        (b"<a>" * 257 + b"</a>" * 257, True),  # ... and one past it
        (b"<a>" * 10_000 + b"</a>" * 10_000, True),
        (b"<a>" * 10_000, True),  # (never closed)
        (b"<a>" + b"x" * 10_000_001 + b"</a>", True),  # a text past 10 MB
        (b"<a>" + b"x" * 6_000_000 + b"<!---->" + b"y" * 4_000_001 + b"</a>", True),
        (b"<a>" + b"x" * 6_000_000 + b"<![CDATA[" + b"y" * 4_000_001 + b"]]></a>", True),
        (b"<a>" + b"x" * 6_000_000 + b"<b/>" + b"y" * 6_000_000 + b"</a>", False),
        (b'<a b="' + b"x" * 10_000_001 + b'"/>', True),
        (b"", True),
        (b"<a/><b/>", True),
        (b'<a x="1" x="2"/>', True),
        (b"<p:a/>", True),  # an undeclared prefix
        (b'<?xml version="1.0" encoding="UTF-8"?><a>\xff</a>', True),
        (b'<?xml version="1.0" encoding="ISO-8859-1"?><a>\xe9</a>', False),
        (b'<?xml version="1.0" encoding="no-such-encoding"?><a/>', True),
        ("<a>é</a>".encode("utf-16"), False),
    ],
    ids=lambda value: str(value)[:40] if isinstance(value, bytes) else None,
)
def test_limits_and_malformed_documents(data: bytes, refused: bool) -> None:
    result = same(data)
    assert (result[0] == "malformed") is refused


@pytest.mark.parametrize(
    "data",
    [
        # an attribute in the elements' default namespace needs a prefix: the first bound
        # to it in scope, the element's own before its parent's...
        b'<a xmlns="urn:a" xmlns:q="urn:a" xmlns:p="urn:a" p:x="1"/>',
        b'<a xmlns="urn:a" xmlns:p="urn:a"><b xmlns:q="urn:a" p:x="1"/></a>',
        # ... not one hidden by a nearer declaration of the same prefix
        b'<a xmlns="urn:a" xmlns:p="urn:a"><b xmlns:p="urn:b" xmlns:q="urn:a" q:x="1"/></a>',
        b'<a xmlns="urn:a" xmlns:p="urn:a" xmlns:q="urn:a"><b xmlns:p="urn:b" q:x="1"/></a>',
        # ... and back in scope after it
        b'<a xmlns="urn:a" xmlns:p="urn:a"><b xmlns:p="urn:b"/><c xmlns:q="urn:a" q:x="1"/></a>',
        # a prefix the document wants, taken by another namespace: the next free ns<N>
        b'<a xmlns:ns1="urn:x" xmlns:p="urn:a"><ns1:b/><p:c xmlns:p="urn:b" xmlns:ns2="urn:c"'
        b' ns2:x="1"/><d xmlns:p="urn:c" p:y="2"/></a>',
        b'<a xmlns:xml2="urn:a" xml2:x="1" xml:lang="en"><xml2:b/></a>',
    ],
)
def test_namespace_prefixes_as_the_reference(data: bytes) -> None:
    assert same(data)[0] == "json"
    assert same(data, CAMEL)[0] == "json"


#: documents of the kinds the fast path takes, for mutations
FAST_SEEDS = [
    quotes(2),
    quotes(2, indent="\n  "),
    b'<?xml version="1.0"?><order xmlns="urn:d" xmlns:p="urn:p" id="7" xml:lang="en">'
    b"<item>a &amp; b</item><note/><p:item>x</p:item><item><![CDATA[<c>]]></item>"
    b'<mixed>one <b>two</b> three</mixed><order-line p:n="1"/></order>',
    b'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"'
    b' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soap:Header/><soap:Body>'
    b'<q:R xmlns:q="urn:quotes"><q:Price xsi:type="decimal">1.10</q:Price><!-- c -->'
    b"<q:At>&#x32;026</q:At></q:R></soap:Body></soap:Envelope>",
    b"<a b='1' c=\"&lt;&#13;\">\r\n<x>&#38;</x>  <y a='&apos;'/></a>",
]
MUTATIONS = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.floats(0, 1),
        st.sampled_from([*b"<>&;\"'=/!?-[]x:%#\t\n\r a1", 0xC3, 0xA9, 0xFF, 0x01, 0xE2]),
    ),
    min_size=1,
    max_size=3,
)


@needs_c
@settings(max_examples=400, deadline=None)
@given(st.sampled_from(FAST_SEEDS), MUTATIONS, STYLES)
def test_the_fast_path_converts_only_what_the_reference_converts_alike(
    seed: bytes, mutations: list[tuple[int, float, int]], style: int
) -> None:
    # pugixml checks less than XML requires (what it leaves is checked around it): a
    # damaged document is declined, never converted otherwise than the reference would
    assert C is not None
    data = bytearray(seed)
    for kind, where, byte in mutations:
        at = int(where * len(data))
        if kind == 0:
            data[at:at] = bytes([byte])
        elif at < len(data):
            if kind == 1:
                del data[at]
            else:
                data[at] = byte
    soap = SOAP11_NS if seed.startswith(b"<soap:") else ""
    fast = C.fast_to_json(bytes(data), style, soap)
    if fast is not None:
        assert ("json", fast) == outcome(REFERENCE, bytes(data), style, soap), bytes(data)


@needs_c
@pytest.mark.parametrize(
    "namespace",
    [
        "http://www.w3.org/2001/XML[chema-instance",  # not a URI: lxml's libxml2 refuses
        "http://www.w3.org:/2001/XMLSchema-instance",  # a port without digits
        "http://www.w3.or:/2001/XMLSchema-instance",
        "urn:a#b%",
        "relative/uri",
    ],
)
def test_the_fast_path_declines_unusual_namespace_names(namespace: str) -> None:
    data = f'<a xmlns:p="{namespace}" p:x="1"/>'.encode()
    assert C is not None
    assert C.fast_to_json(data, UNCHANGED, "") is None


@pytest.mark.parametrize(
    "data",
    [
        # what is not converted is read all the same: refused when it is not XML
        b"<s:Body>&</s:Body>",
        b"<s:Body>]]></s:Body>",
        b"<s:Header><p:h/></s:Header><s:Body/>",
        b'<s:Header a="&x;"/><s:Body/>',
        b"<s:Body><r/></s:Body><s:Body>&#0;</s:Body>",
        b"<s:Body><r/></s:Body><!-- a -- b -->",
    ],
)
def test_a_soap_envelope_is_refused_for_what_is_not_converted_too(data: bytes) -> None:
    envelope = b'<s:Envelope xmlns:s="' + SOAP11_NS.encode() + b'">' + data + b"</s:Envelope>"
    assert same(envelope, UNCHANGED, SOAP11_NS)[0] == "malformed"


@pytest.mark.parametrize(
    "data",
    [
        # two names the style writes alike are one JSON name: the attribute's last value
        # (a dict keeps one key), the elements' values an array
        b'<a xmlns:p="urn:a"><a order-id="1" order_id="2"/></a>',
        b'<a a="1" a-="2"/>',
        b"<r><order-id>1</order-id><x/><order_id>2</order_id><order.id/></r>",
    ],
)
def test_names_written_alike_are_one_json_name(data: bytes) -> None:
    for style in (UNCHANGED, CAMEL, PASCAL):
        assert same(data, style)[0] == "json"


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
@pytest.mark.parametrize("kind", ["one-prefix", "many-prefixes", "attributes", "one-element"])
def test_a_document_of_forty_thousand_namespaces_is_converted(
    module: ModuleType, kind: str
) -> None:
    # every namespace wants the same prefix: each after the first gets the next free ns<N>
    # (that was a scan of all the namespaces so far, per namespace: for this 1 MB document,
    # minutes of CPU in either module; now a set lookup)
    count = 40_000
    last = count - 1
    if kind == "one-prefix":
        pieces = [b'<p:x xmlns:p="urn:%d"/>' % n for n in range(count)]
        expected = {f"@xmlns:ns{last}": f"urn:{last}", f"ns{last}:x": None}
    elif kind == "many-prefixes":
        pieces = [b'<p%d:x xmlns:p%d="urn:%d"/>' % (n, n, n) for n in range(count)]
        expected = {f"@xmlns:p{last}": f"urn:{last}", f"p{last}:x": None}
    elif kind == "attributes":
        pieces = [b'<x xmlns:p="urn:%d" p:a="1"/>' % n for n in range(count)]
        expected = {f"@xmlns:ns{last}": f"urn:{last}"}
    else:  # (each attribute's prefix was a walk over all the element's declarations)
        pieces = [b'<x xmlns:p%d="urn:%d" p%d:a="1"/>' % (n, n, n) for n in range(count // 4)]
        pieces = [b"<x" + b"".join(piece[2:-2] for piece in pieces) + b"/>"]
        last = count // 4 - 1
    value = json.loads(module.xml_to_json(b"<r>" + b"".join(pieces) + b"</r>", UNCHANGED, ""))
    if kind == "one-element":
        assert value["r"][f"@xmlns:p{last}"] == f"urn:{last}"
        assert value["r"]["x"][f"@p{last}:a"] == "1"
        return
    assert expected.items() <= value["r"].items()
    if kind == "attributes":
        assert value["r"]["x"][-1] == {f"@ns{last}:a": "1"}
