"""A small JSON service for the XML mediation tests (json-to-xml), over real HTTP/1.1.

``GET /json/<name>`` answers a canned JSON document (``DOCUMENTS``; ``malformed`` is not
JSON, ``big`` is ~24 KB); ``?chunked=1`` sends it chunked. ``POST /echo`` parses the JSON body it
receives (a body that is not JSON → 400) and answers ``{"received": <it>, "contentType":
...}``. Every request is recorded (``received``).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from .recording_http import QuietHandler, RecordingService, write_body

DOCUMENTS: dict[str, str] = {
    "order": json.dumps(
        {
            "order": {
                "@id": "7",
                "customer_name": "Ana & Rui <AR>",
                "items": [{"sku": "A-1", "qty": 2}, {"sku": "B-2", "qty": 1}],
                "paid": True,
                "note": None,
                "price": 12.50,
            }
        }
    ),
    "list": json.dumps([1, "two", [3, 4], {"five": 5}]),
    "malformed": '{"order": {"id": 7,',
    "bad-name": json.dumps({"order": {"first name": "Ana"}}),
    "big": json.dumps({"list": {"entry": ["x" * 100 for _ in range(200)]}}),
}


class JsonService(RecordingService):
    def __init__(self) -> None:
        super().__init__(_handler)


def _handler(service: JsonService) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802  (http.server's name)
            headers, body = service.record(self)
            try:
                document = json.loads(body)
            except ValueError:
                self._send(400, b'{"error":"not JSON"}')
                return
            answer = {"received": document, "contentType": headers.get("content-type")}
            self._send(200, json.dumps(answer).encode())

        def do_GET(self) -> None:  # noqa: N802  (http.server's name)
            service.record(self)
            parts = urlsplit(self.path)
            name = parts.path.removeprefix("/json/")
            if name not in DOCUMENTS:
                self._send(404, b'{"error":"no such document"}')
                return
            chunked = "chunked" in parse_qs(parts.query)
            self._send(200, DOCUMENTS[name].encode(), chunked=chunked)

        do_HEAD = do_GET  # noqa: N815

        def _send(self, status: int, body: bytes, chunked: bool = False) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            write_body(self, body, chunked=chunked)

    return Handler
