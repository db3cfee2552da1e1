"""http-logger: every request logged, batches POSTed to a real HTTP receiver on loopback."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench_plugins import Case, Setup


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def _receiver(work: Path) -> Iterator[Setup]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        uri = f"http://127.0.0.1:{server.server_address[1]}/logs"
        config = {"uri": uri, "batch_max_size": 1000}
        plugin = {"name": "http-logger", "scope": "route", "order": 950, "config": config}
        yield Setup(attach=[plugin])
    finally:
        server.shutdown()
        server.server_close()


CASES = [Case("http-logger", 0.9, _receiver)]
