"""A small SOAP 1.1 service for the XML mediation tests (xml-to-json), over real HTTP/1.1.

``POST /soap`` is the service: it parses the envelope it receives (the standard library's
expat-based ElementTree, independent of the gateway's lxml), refuses what is not a SOAP 1.1
request (wrong content type, malformed XML, no Envelope or Body in the 1.1 namespace) with
a ``soap:Client`` Fault, and answers its operations:

* ``GetQuote`` (``symbol``) → ``GetQuoteResponse`` with one ``Quote`` (attributes,
  elements); an unknown symbol → a ``soap:Client`` Fault with a ``detail``;
* ``ListQuotes`` (``count``) → that many ``Quote`` elements (a 10 KB answer is ~45);
* ``Fail`` (``reason``) → a ``soap:Server`` Fault.

``POST /echo`` parses the XML document it receives (malformed → 400) and sends it back.
``GET /raw/<name>`` answers a canned XML document as it is written (``RAW``): malformed ones,
one with an external entity, billion laughs, a large one; ``?chunked=1`` sends it chunked,
``?gzip=1`` gzip-encoded, ``?type=`` sets its content type. Every request is recorded
(``received``).
"""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from .recording_http import QuietHandler, RecordingService, write_body

SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
QUOTES = "urn:example:quotes"
PRICES = {"ACME": "12.50", "INIT": "3.20"}

LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{n} "{("&lol" + (str(n - 1) if n > 1 else "") + ";") * 10}">'
        for n in range(1, 10)
    )
    + "]><lolz>&lol9;</lolz>"
)
#: the same entities in an attribute value, which libxml2 would have to expand to read it
LAUGHS_ATTRIBUTE = LAUGHS.replace("<lolz>&lol9;</lolz>", '<lolz a="&lol9;"/>')
RAW: dict[str, str] = {
    "plain": '<?xml version="1.0" encoding="UTF-8"?><order id="7"><item>a</item>'
    "<item>b</item><total>2</total></order>",
    "malformed": "<order><item>a</order>",
    "truncated": '<?xml version="1.0"?><order><item>a</item>',
    "not-xml": "this is not XML at all",
    "xxe": '<?xml version="1.0"?><!DOCTYPE order [<!ENTITY secret SYSTEM '
    '"file:///etc/passwd">]><order>&secret;</order>',
    "external-dtd": '<?xml version="1.0"?><!DOCTYPE order SYSTEM "file:///etc/passwd">'
    "<order>x</order>",
    "network-dtd": '<?xml version="1.0"?><!DOCTYPE order SYSTEM "http://127.0.0.1:9/x.dtd">'
    "<order>x</order>",
    "parameter-entity": '<?xml version="1.0"?><!DOCTYPE order [<!ENTITY % p SYSTEM '
    '"file:///etc/passwd"> %p;]><order>x</order>',
    "laughs": LAUGHS,
    "laughs-attribute": LAUGHS_ATTRIBUTE,
    # ~24 KB: past a small max_body_size
    "big": "<list>"
    + "".join(f"<entry n='{n}'>{'x' * 100}</entry>" for n in range(200))
    + "</list>",
    "empty": "",
    # far past libxml2's depth limit (256): refused where the limit is met, nothing recursed
    "deep": "<a>" * 10_000 + "</a>" * 10_000,
    "soap-plain": f'<soap:Envelope xmlns:soap="{SOAP11}"><soap:Body>'
    f'<Hello xmlns="{QUOTES}">world</Hello></soap:Body></soap:Envelope>',
    "soap-no-body": f'<soap:Envelope xmlns:soap="{SOAP11}"><soap:Header/></soap:Envelope>',
}


def quote_xml(symbol: str, index: int = 0) -> str:
    price = PRICES.get(symbol, f"{index + 1}.{index % 100:02d}")
    return (
        f'<Quote currency="EUR" exchange="XLIS"><Symbol>{symbol}</Symbol>'
        f"<Name>{symbol} &amp; Sons, Ltd.</Name><Price>{price}</Price>"
        f"<Volume>{1000 + index}</Volume></Quote>"
    )


def envelope(body: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="{SOAP11}">'
        f"<soap:Body>{body}</soap:Body></soap:Envelope>"
    ).encode()


def fault(code: str, text: str, detail: str = "") -> bytes:
    detail_xml = f"<detail>{detail}</detail>" if detail else ""
    return envelope(
        f"<soap:Fault><faultcode>soap:{code}</faultcode><faultstring>{text}</faultstring>"
        f"{detail_xml}</soap:Fault>"
    )


def soap_answer(headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
    """The quote service's SOAP 1.1 exchange: (status, envelope)."""
    if headers.get("content-type", "").partition(";")[0].strip() != "text/xml":
        return 500, fault("Client", "a SOAP 1.1 request is text/xml")
    if "soapaction" not in headers:
        return 500, fault("Client", "a SOAP 1.1 request has a SOAPAction header")
    try:
        # the gateway under test sent it: trusted input, and the point is to parse it
        root = ET.fromstring(body)  # noqa: S314
    except ET.ParseError as error:
        return 500, fault("Client", f"malformed envelope: {error}")
    if root.tag != f"{{{SOAP11}}}Envelope":
        return 500, fault("Client", f"not a SOAP 1.1 envelope: {root.tag}")
    soap_body = root.find(f"{{{SOAP11}}}Body")
    if soap_body is None or len(soap_body) == 0:
        return 500, fault("Client", "the envelope has no Body content")
    operation = soap_body[0]
    name = operation.tag.rpartition("}")[2]
    arguments = {child.tag.rpartition("}")[2]: child.text or "" for child in operation}
    if name == "GetQuote":
        symbol = arguments.get("symbol", "")
        if symbol not in PRICES:
            detail = f'<q:UnknownSymbol xmlns:q="{QUOTES}">{symbol}</q:UnknownSymbol>'
            return 500, fault("Client", f"unknown symbol {symbol}", detail)
        return 200, envelope(
            f'<GetQuoteResponse xmlns="{QUOTES}">{quote_xml(symbol)}</GetQuoteResponse>'
        )
    if name == "ListQuotes":
        count = int(arguments.get("count", "1"))
        quotes = "".join(quote_xml(f"SYM{n}", n) for n in range(count))
        return 200, envelope(f'<ListQuotesResponse xmlns="{QUOTES}">{quotes}</ListQuotesResponse>')
    if name == "Fail":
        return 500, fault("Server", arguments.get("reason", "failed"))
    return 500, fault("Client", f"unknown operation {name}")


class SoapService(RecordingService):
    def __init__(self) -> None:
        super().__init__(_handler)

    def answer(self, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        """The SOAP exchange: (status, envelope)."""
        return soap_answer(headers, body)


def _handler(service: SoapService) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802  (http.server's name)
            headers, body = service.record(self)
            if urlsplit(self.path).path == "/echo":  # an XML document, parsed, sent back
                try:
                    ET.fromstring(body)  # noqa: S314  (the gateway under test sent it)
                except ET.ParseError:
                    self._send(400, b"<error>not XML</error>", "application/xml")
                    return
                self._send(200, body, "application/xml")
                return
            if urlsplit(self.path).path != "/soap":
                self._send(404, b"", "text/plain")
                return
            status, answer = service.answer(headers, body)
            self._send(status, answer, "text/xml; charset=utf-8")

        def do_GET(self) -> None:  # noqa: N802  (http.server's name)
            service.record(self)
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            name = parts.path.removeprefix("/raw/")
            if name not in RAW:
                self._send(404, b"", "text/plain")
                return
            kind = query.get("type", ["application/xml"])[0]
            body = RAW[name].encode()
            if "gzip" in query:
                self._send(200, gzip.compress(body), kind, encoding="gzip")
                return
            self._send(200, body, kind, chunked="chunked" in query)

        do_HEAD = do_GET  # noqa: N815

        def _send(
            self, status: int, body: bytes, kind: str, chunked: bool = False, encoding: str = ""
        ) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            if encoding:
                self.send_header("content-encoding", encoding)
            self.send_header("etag", '"soap-1"')
            write_body(self, body, chunked=chunked)

    return Handler
