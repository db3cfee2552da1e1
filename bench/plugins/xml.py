"""xml-to-json: a 10 KB XML answer converted to JSON for a client that asks for JSON, against
the same routes relaying the same answer untouched (the issue's target: >= 0.5); json-to-xml,
its inverse: the same quotes as a JSON answer converted to XML for a client that asks for XML
(no target of its own: measured beside it).

The service is nginx sending one file (``quotes_document``: 58 quotes of a stock service,
attributes, repeated elements, a namespace, ~10 KB), so that a Python stand-in does not
take the CPU the gateway needs. Both gateways get the client's ``Accept: application/json``;
without the plugin it changes nothing.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

from bench_gateway import serving_nginx
from bench_plugins import Case, Setup


def quotes_document(count: int = 58) -> str:
    """A stock service's answer: ``count`` quotes (58: 10 KB)."""
    quotes = "".join(
        f'<Quote currency="EUR" exchange="XLIS"><Symbol>SYM{n}</Symbol>'
        f"<Name>Company number {n} &amp; Sons, Ltd.</Name><Price>{n + 1}.{n % 100:02d}</Price>"
        f"<Volume>{1000 + n}</Volume><Open>{n}.00</Open></Quote>"
        for n in range(count)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<ListQuotesResponse xmlns="urn:example:quotes">{quotes}</ListQuotesResponse>'
    )


@contextlib.contextmanager
def _xml_to_json(work: Path) -> Iterator[Setup]:
    (work / "quotes.xml").write_text(quotes_document())
    # nginx's workers run as another user: they may pass through the (private) work
    # directory to the file, not list it; a body this long cannot be a `return` argument
    # (nginx takes no parameter over 4 KB)
    work.chmod(0o711)
    (work / "quotes.xml").chmod(0o644)
    answer = f"default_type application/xml; root {work}; try_files /quotes.xml =404;"
    with serving_nginx(work, "xml-service", answer) as port:
        plugin = {"name": "xml-to-json", "scope": "route", "order": 440, "config": {}}
        yield Setup(attach=[plugin], headers={"Accept": "application/json"}, upstream_port=port)


def quotes_json(count: int = 58) -> str:
    """The same quotes as JSON, as xml-to-json writes them (~10 KB)."""
    quotes = [
        {
            "@currency": "EUR",
            "@exchange": "XLIS",
            "Symbol": f"SYM{n}",
            "Name": f"Company number {n} & Sons, Ltd.",
            "Price": f"{n + 1}.{n % 100:02d}",
            "Volume": f"{1000 + n}",
            "Open": f"{n}.00",
        }
        for n in range(count)
    ]
    document = {"ListQuotesResponse": {"@xmlns": "urn:example:quotes", "Quote": quotes}}
    return json.dumps(document, separators=(",", ":"))


@contextlib.contextmanager
def _json_to_xml(work: Path) -> Iterator[Setup]:
    (work / "quotes.json").write_text(quotes_json())
    work.chmod(0o711)  # (as above)
    (work / "quotes.json").chmod(0o644)
    answer = f"default_type application/json; root {work}; try_files /quotes.json =404;"
    with serving_nginx(work, "json-service", answer) as port:
        plugin = {"name": "json-to-xml", "scope": "route", "order": 441, "config": {}}
        yield Setup(attach=[plugin], headers={"Accept": "application/xml"}, upstream_port=port)


CASES = [
    Case("xml-to-json (10 KB answer)", 0.5, _xml_to_json),
    Case("json-to-xml (10 KB answer)", 0.5, _json_to_xml),
]
