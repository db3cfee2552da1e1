"""xml-to-json and json-to-xml on real traffic: a Gateway on loopback given a snapshot, in
front of a real SOAP 1.1 service (which parses the envelopes it gets) and a real JSON service
(``tests/support``), one of each for the module."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.gateway.test_pipeline import plugin, snapshot
from tests.support.jsonservice import DOCUMENTS, JsonService
from tests.support.soapservice import QUOTES, RAW, SOAP11, SoapService

PROBLEM = "application/problem+json"
JSON = {"Accept": "application/json"}
XML = {"Accept": "application/xml"}


@pytest.fixture(scope="module")
def soap() -> Iterator[SoapService]:
    with SoapService() as service:
        yield service


@pytest.fixture(scope="module")
def json_service() -> Iterator[JsonService]:
    with JsonService() as service:
        yield service


async def through(served: Any, port: int, name: str, **config: Any) -> httpx.AsyncClient:
    """A gateway whose one route, towards ``port``, carries the plugin ``name``."""
    gw, client, _ = await served()
    await gw.apply(snapshot(port, [plugin(name, 440, **config)]))
    return client


@pytest.fixture
async def soap_gateway(served: Any, soap: SoapService) -> httpx.AsyncClient:
    """xml-to-json as the SOAP service's JSON face."""
    soap.received.clear()
    return await through(
        served,
        soap.port,
        "xml-to-json",
        transform_request=True,
        soap={"version": "1.1", "action": "urn:example:quotes#GetQuote"},
    )


def problem_of(response: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    document: dict[str, Any] = response.json()
    assert document["type"] == f"urn:portico:gateway:{kind}"
    assert document["status"] == status
    return document


# ------------------------------------------------------------------------------ SOAP


async def test_a_json_call_becomes_a_soap_call_and_its_answer_json(
    soap_gateway: httpx.AsyncClient, soap: SoapService
) -> None:
    call = {"GetQuote": {"@xmlns": QUOTES, "symbol": "ACME"}}
    response = await soap_gateway.post("/soap", json=call, headers=JSON)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "GetQuoteResponse": {
            "@xmlns": QUOTES,
            "Quote": {
                "@currency": "EUR",
                "@exchange": "XLIS",
                "Symbol": "ACME",
                "Name": "ACME & Sons, Ltd.",
                "Price": "12.50",
                "Volume": "1000",
            },
        }
    }
    assert response.headers["content-type"] == "application/json"
    assert response.headers["transfer-encoding"] == "chunked"  # (a length it did not know)
    assert "etag" not in response.headers  # (the node's described its XML)
    assert response.headers["vary"] == "Accept"
    assert response.headers["x-request-id"]
    # what the service got: an envelope it parsed, with the action, asked for XML
    received = soap.received[-1]
    assert received.headers["content-type"] == "text/xml; charset=utf-8"
    assert received.headers["soapaction"] == '"urn:example:quotes#GetQuote"'
    assert received.headers["accept"] == "application/xml, text/xml"
    assert "accept-encoding" not in received.headers
    envelope = ET.fromstring(received.body)  # noqa: S314  (the gateway's own output)
    operation = envelope.find(f"{{{SOAP11}}}Body/{{{QUOTES}}}GetQuote/{{{QUOTES}}}symbol")
    assert operation is not None and operation.text == "ACME"


async def test_a_soap_fault_is_a_502_problem_with_its_code_and_string(
    soap_gateway: httpx.AsyncClient,
) -> None:
    response = await soap_gateway.post("/soap", json={"GetQuote": {"symbol": "NOPE"}}, headers=JSON)
    document = problem_of(response, 502, "soap-fault")
    assert document["faultCode"] == "soap:Client"
    assert document["faultString"] == "unknown symbol NOPE"
    assert document["faultDetail"] == {"q:UnknownSymbol": {"@xmlns:q": QUOTES, "#text": "NOPE"}}
    assert document["detail"] == (
        "the SOAP service answered with a fault: soap:Client: unknown symbol NOPE"
    )
    server = await soap_gateway.post("/soap", json={"Fail": {"reason": "db down"}}, headers=JSON)
    document = problem_of(server, 502, "soap-fault")
    assert (document["faultCode"], document["faultString"]) == ("soap:Server", "db down")
    assert "faultDetail" not in document


async def test_the_service_refuses_an_envelope_it_cannot_parse(
    served: Any, soap: SoapService
) -> None:
    """The service really parses: a client's own malformed envelope (not converted, its type
    is not JSON) comes back as the service's Client fault, as a 502 problem."""
    client = await through(served, soap.port, "xml-to-json", soap={"version": "1.1"})
    headers = {**JSON, "Content-Type": "text/xml", "SOAPAction": '""'}
    broken = f'<soap:Envelope xmlns:soap="{SOAP11}"><soap:Body><GetQuote></soap:Body>'
    document = problem_of(
        await client.post("/soap", content=broken, headers=headers), 502, "soap-fault"
    )
    assert document["faultCode"] == "soap:Client"
    assert document["faultString"].startswith("malformed envelope: mismatched tag")
    # well-formed, its answer's Body unwrapped (transform_request is off: sent as it is)
    good = f'<soap:Envelope xmlns:soap="{SOAP11}"><soap:Body><GetQuote><symbol>INIT</symbol>'
    good += "</GetQuote></soap:Body></soap:Envelope>"
    response = await client.post("/soap", content=good, headers=headers)
    assert response.json()["GetQuoteResponse"]["Quote"]["Price"] == "3.20"
    assert soap.received[-1].body == good.encode()


@pytest.mark.parametrize(
    ("naming", "names"),
    [
        ("unchanged", ("ListQuotesResponse", "Quote", "Symbol", "@currency")),
        ("camelCase", ("listQuotesResponse", "quote", "symbol", "@currency")),
        ("PascalCase", ("ListQuotesResponse", "Quote", "Symbol", "@Currency")),
    ],
)
async def test_property_naming_and_repeated_elements(
    served: Any, soap: SoapService, naming: str, names: tuple[str, str, str, str]
) -> None:
    client = await through(
        served,
        soap.port,
        "xml-to-json",
        transform_request=True,
        property_naming=naming,
        soap={"version": "1.1"},
    )
    response = await client.post("/soap", json={"ListQuotes": {"count": 3}}, headers=JSON)
    assert response.status_code == 200, response.text
    top, quote, symbol, currency = names
    quotes = response.json()[top][quote]
    assert [q[symbol] for q in quotes] == ["SYM0", "SYM1", "SYM2"]  # siblings → an array
    assert quotes[0][currency] == "EUR"
    assert soap.received[-1].headers["soapaction"] == '""'  # (no action configured)


# ------------------------------------------------------------------------------ negotiation


@pytest.mark.parametrize(
    ("accept", "converted"),
    [
        (None, False),
        ("*/*", False),
        ("application/xml", False),
        ("application/*", False),
        ("text/html", False),
        ("application/json", True),
        ("application/json, application/xml;q=0.5", True),
        ("application/xml;q=0.5, application/json", True),
        ("application/json;q=0.5, application/xml", False),
        ("application/json;q=0, */*", False),
        ("text/*, application/json;q=0.9", False),
        ("application/json;q=oops, application/xml;q=0.1", False),
    ],
)
async def test_only_a_client_that_prefers_json_gets_json(
    served: Any, soap: SoapService, accept: str | None, converted: bool
) -> None:
    client = await through(served, soap.port, "xml-to-json")
    headers = {"Accept": accept} if accept is not None else {}
    if accept is None:
        client.headers.pop("accept", None)
    response = await client.get("/raw/plain", headers=headers)
    assert response.status_code == 200
    assert response.headers["vary"] == "Accept"  # either way: it depends on Accept
    if converted:
        assert response.json() == {"order": {"@id": "7", "item": ["a", "b"], "total": "2"}}
    else:
        assert response.content == RAW["plain"].encode()
        assert response.headers["content-type"] == "application/xml"
        assert response.headers["etag"] == '"soap-1"'


async def test_content_types_and_transform_response(served: Any, soap: SoapService) -> None:
    client = await through(served, soap.port, "xml-to-json", content_types=["text/xml"])
    untouched = await client.get("/raw/plain", headers=JSON)  # application/xml: not listed
    assert untouched.content == RAW["plain"].encode()
    listed = await client.get("/raw/plain?type=text/xml;%20charset=utf-8", headers=JSON)
    assert listed.json()["order"]["total"] == "2"
    off = await through(served, soap.port, "xml-to-json", transform_response=False)
    assert (await off.get("/raw/plain", headers=JSON)).content == RAW["plain"].encode()


async def test_an_encoded_answer_is_relayed_as_it_came(served: Any, soap: SoapService) -> None:
    client = await through(served, soap.port, "xml-to-json")
    response = await client.get("/raw/plain?gzip=1", headers=JSON)
    assert response.headers["content-encoding"] == "gzip"
    assert response.content == RAW["plain"].encode()  # (httpx decoded it)
    assert "accept-encoding" not in soap.received[-1].headers  # (it was asked for none)


async def test_head_gets_the_converted_head(served: Any, soap: SoapService) -> None:
    client = await through(served, soap.port, "xml-to-json")
    response = await client.head("/raw/plain", headers=JSON)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.content == b""


async def test_a_chunked_answer_is_converted(served: Any, soap: SoapService) -> None:
    client = await through(served, soap.port, "xml-to-json")
    response = await client.get("/raw/big?chunked=1", headers=JSON)
    assert response.status_code == 200
    entries = response.json()["list"]["entry"]
    assert len(entries) == 200 and entries[199] == {"@n": "199", "#text": "x" * 100}


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize("name", ["malformed", "truncated", "not-xml", "deep", "soap-plain"])
async def test_a_malformed_answer_is_a_502_problem(
    served: Any, soap: SoapService, name: str
) -> None:
    # (soap-plain is well-formed, but no SOAP 1.2 envelope)
    client = await through(served, soap.port, "xml-to-json", soap={"version": "1.2"})
    for query in ("", "?chunked=1"):
        response = await client.get(f"/raw/{name}{query}", headers=JSON)
        document = problem_of(response, 502, "upstream-body-invalid")
        assert document["detail"].startswith("the upstream answer: ")
        assert "etag" not in response.headers
        assert response.headers["x-request-id"]
    # a client that did not ask for JSON gets the node's answer as it came
    assert (await client.get(f"/raw/{name}", headers=XML)).content == RAW[name].encode()


@pytest.mark.parametrize(
    "name", ["xxe", "external-dtd", "parameter-entity", "network-dtd", "laughs", "laughs-attribute"]
)
async def test_entities_and_dtds_are_refused_without_expansion(
    served: Any, soap: SoapService, name: str
) -> None:
    client = await through(served, soap.port, "xml-to-json")
    response = await client.get(f"/raw/{name}", headers=JSON)
    document = problem_of(response, 502, "upstream-body-invalid")
    assert "root:" not in response.text  # nothing of /etc/passwd
    assert len(response.content) < 1000  # no expansion
    assert any(
        reason in document["detail"]
        for reason in ("(DTD) is not allowed", "is not loaded", "amplification")
    )


async def test_an_answer_past_max_body_size_is_a_502_problem(
    served: Any, soap: SoapService
) -> None:
    client = await through(served, soap.port, "xml-to-json", max_body_size=10_000)
    for query in ("", "?chunked=1"):  # announced by its length, or found while streaming
        response = await client.get(f"/raw/big{query}", headers=JSON)
        document = problem_of(response, 502, "upstream-body-too-large")
        assert document["detail"] == (
            "the upstream answer is larger than max_body_size (10000 bytes)"
        )
    small = await client.get("/raw/plain", headers=JSON)
    assert small.json()["order"]["@id"] == "7"


# ------------------------------------------------------------------------------ requests


async def test_a_json_body_becomes_xml_with_array_items_and_root(
    served: Any, soap: SoapService
) -> None:
    """JSON → XML at the gateway, the service parses and echoes it, XML → JSON on the way
    back: the round trip through both directions, with the configured names."""
    client = await through(
        served,
        soap.port,
        "xml-to-json",
        transform_request=True,
        array_item_name="cell",
        root_element_name="document",
    )
    body = {"grid": [[1, 2], [3]], "title": "t", "on": True}
    response = await client.post("/echo", json=body, headers=JSON)
    assert response.status_code == 200, response.text
    assert soap.received[-1].body == (
        b'<?xml version="1.0" encoding="UTF-8"?><document><grid><cell>1</cell><cell>2</cell>'
        b"</grid><grid><cell>3</cell></grid><title>t</title><on>true</on></document>"
    )
    assert soap.received[-1].headers["content-type"] == "application/xml"
    assert response.json() == {
        "document": {"grid": [{"cell": ["1", "2"]}, {"cell": "3"}], "title": "t", "on": "true"}
    }


async def test_request_bodies_it_cannot_convert_are_400_problems(
    served: Any, soap: SoapService
) -> None:
    client = await through(served, soap.port, "xml-to-json", transform_request=True)
    before = len(soap.received)
    cases = [
        (b'{"a": ', "the request body is not JSON"),
        (b'{"first name": 1}', '/first name: "first name" is not a valid XML name'),
        (b'{"a": NaN}', "the request body is not JSON: NaN is not JSON"),
    ]
    for content, detail in cases:
        response = await client.post(
            "/echo", content=content, headers={"Content-Type": "application/json"}
        )
        assert problem_of(response, 400, "request-body-invalid")["detail"].startswith(detail)
    assert len(soap.received) == before  # none of them reached the service
    # another content type passes as it came
    plain = await client.post("/echo", content=b"<a>x</a>", headers={"Content-Type": "text/xml"})
    assert plain.status_code == 200 and soap.received[-1].body == b"<a>x</a>"


async def test_a_request_body_past_max_body_size_is_413(served: Any, soap: SoapService) -> None:
    client = await through(
        served, soap.port, "xml-to-json", transform_request=True, max_body_size=1000
    )
    before = len(soap.received)
    big = json.dumps({"a": "x" * 2000}).encode()
    headers = {"Content-Type": "application/json"}
    response = await client.post("/echo", content=big, headers=headers)
    assert problem_of(response, 413, "body-too-large")["detail"] == (
        "the request body is larger than max_body_size (1000 bytes)"
    )

    async def chunks() -> AsyncIterator[bytes]:  # chunked: found while reading
        for start in range(0, len(big), 500):
            yield big[start : start + 500]

    chunked = await client.post("/echo", content=chunks(), headers=headers)
    problem_of(chunked, 413, "body-too-large")
    assert len(soap.received) == before
    fits = await client.post("/echo", json={"a": "b"}, headers=JSON)
    assert fits.json() == {"a": "b"}


# ------------------------------------------------------------------------------ json-to-xml


async def test_json_answers_become_xml_for_xml_clients(
    served: Any, json_service: JsonService
) -> None:
    client = await through(served, json_service.port, "json-to-xml")
    response = await client.get("/json/order", headers=XML)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/xml; charset=utf-8"
    assert response.headers["vary"] == "Accept"
    assert response.content == (
        b'<?xml version="1.0" encoding="UTF-8"?><order id="7">'
        b"<customer_name>Ana &amp; Rui &lt;AR&gt;</customer_name>"
        b"<items><sku>A-1</sku><qty>2</qty></items><items><sku>B-2</sku><qty>1</qty></items>"
        b"<paid>true</paid><note/><price>12.5</price></order>"
    )
    assert json_service.received[-1].headers["accept"] == "application/json"
    text = await client.get("/json/order", headers={"Accept": "text/xml"})
    assert text.headers["content-type"] == "text/xml; charset=utf-8"
    untouched = await client.get("/json/order", headers=JSON)
    assert untouched.content == DOCUMENTS["order"].encode()
    listed = await client.get("/json/list?chunked=1", headers=XML)
    assert listed.content.endswith(
        b"<root><item>1</item><item>two</item><item><item>3</item><item>4</item></item>"
        b"<item><five>5</five></item></root>"
    )


async def test_json_to_xml_naming_items_and_root(served: Any, json_service: JsonService) -> None:
    client = await through(
        served,
        json_service.port,
        "json-to-xml",
        property_naming="PascalCase",
        array_item_name="Entry",
        root_element_name="Document",
    )
    order = await client.get("/json/order", headers=XML)
    assert b"<CustomerName>Ana &amp; Rui &lt;AR&gt;</CustomerName>" in order.content
    assert b'<Order Id="7">' in order.content
    listed = await client.get("/json/list", headers=XML)
    assert listed.content.endswith(
        b"<Document><Entry>1</Entry><Entry>two</Entry><Entry><Entry>3</Entry><Entry>4</Entry>"
        b"</Entry><Entry><Five>5</Five></Entry></Document>"
    )


@pytest.mark.parametrize(
    ("name", "kind", "detail"),
    [
        ("malformed", "upstream-body-invalid", "the upstream answer is not JSON"),
        ("bad-name", "upstream-body-invalid", "the upstream answer cannot be written as XML"),
        ("big", "upstream-body-too-large", "the upstream answer is larger than max_body_size"),
    ],
)
async def test_json_answers_it_cannot_convert_are_502_problems(
    served: Any, json_service: JsonService, name: str, kind: str, detail: str
) -> None:
    client = await through(served, json_service.port, "json-to-xml", max_body_size=10_000)
    response = await client.get(f"/json/{name}", headers=XML)
    assert problem_of(response, 502, kind)["detail"].startswith(detail)


async def test_xml_request_bodies_become_json(served: Any, json_service: JsonService) -> None:
    client = await through(served, json_service.port, "json-to-xml", transform_request=True)
    xml = b'<order id="7"><item>a</item><item>b</item></order>'
    response = await client.post(
        "/echo", content=xml, headers={**JSON, "Content-Type": "application/xml"}
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "received": {"order": {"@id": "7", "item": ["a", "b"]}},
        "contentType": "application/json",
    }
    refused = await client.post(
        "/echo",
        content=RAW["xxe"].encode(),
        headers={**JSON, "Content-Type": "text/xml"},
    )
    assert "DTD" in problem_of(refused, 400, "request-body-invalid")["detail"]


async def test_a_cached_answer_is_converted_and_refused_as_a_live_one(
    served: Any, soap: SoapService
) -> None:
    """proxy-cache keeps the node's XML (its copy is taken before any conversion); a hit is
    a plugin's reply, converted the same way, and replaced the same way when malformed."""
    gw, client, _ = await served()
    soap.received.clear()
    cache = plugin("proxy-cache", 300, cache_strategy="memory", cache_key=["$uri"])
    await gw.apply(snapshot(soap.port, [cache, plugin("xml-to-json", 440)]))
    for expected in ("MISS", "HIT"):
        good = await client.get("/raw/plain", headers=JSON)
        assert good.headers["cache-status"] == expected
        assert good.json()["order"]["item"] == ["a", "b"]
        bad = await client.get("/raw/malformed", headers=JSON)
        problem_of(bad, 502, "upstream-body-invalid")
    # the second malformed answer was the cache's (the node was asked once)
    assert [r.path for r in soap.received] == ["/raw/plain", "/raw/malformed"]
    assert (await client.get("/raw/plain", headers=XML)).content == RAW["plain"].encode()
