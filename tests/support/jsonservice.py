"""A small JSON service for the XML mediation tests (json-to-xml), over real HTTP/1.1.

``GET /json/<name>`` answers a canned JSON document (``DOCUMENTS``; ``malformed`` is not
JSON, ``big`` is ~24 KB); ``?chunked=1`` sends it chunked. ``POST /echo`` parses the JSON body it
receives (a body that is not JSON → 400) and answers ``{"received": <it>, "contentType":
...}``. Every request is recorded (``received``).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .http_body import write_body

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


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class JsonService:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))
        self._thread.daemon = True

    def __enter__(self) -> JsonService:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True


def _handler(service: JsonService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _record(self) -> tuple[dict[str, str], bytes]:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            service.received.append(Received(self.command, self.path, headers, body))
            return headers, body

        def do_POST(self) -> None:
            headers, body = self._record()
            try:
                document = json.loads(body)
            except ValueError:
                self._send(400, b'{"error":"not JSON"}')
                return
            answer = {"received": document, "contentType": headers.get("content-type")}
            self._send(200, json.dumps(answer).encode())

        def do_GET(self) -> None:
            self._record()
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

        def log_message(self, *args: Any) -> None:
            return

    return Handler
