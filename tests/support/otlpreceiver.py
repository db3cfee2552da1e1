"""A real OTLP/HTTP traces receiver for tests: ``POST /v1/traces`` bodies decoded as
``ExportTraceServiceRequest`` with ``opentelemetry-proto`` (what an OpenTelemetry Collector's
otlphttp receiver accepts), answered with an empty ``ExportTraceServiceResponse``.

An OpenTelemetry Collector is not installable from the registries used here (no Debian or
PyPI package ships it), so the tests speak the real wire protocol to this server instead.

By hand (see by_hand.py), it serves until stopped and prints a line for each span it gets:

    .venv/bin/python tests/support/otlpreceiver.py --port 4318
"""

from __future__ import annotations

if __name__ == "__main__" and not __package__:  # run by its path: see by_hand.py
    from by_hand import run_as_module

    run_as_module(__file__)

import argparse
import json
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from . import by_hand


@dataclass
class ReceivedSpan:
    service_name: str
    scope: str
    span: Span

    @property
    def attributes(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for item in self.span.attributes:
            kind = item.value.WhichOneof("value")
            found[item.key] = getattr(item.value, kind) if kind else None
        return found

    def __str__(self) -> str:
        span = self.span
        return (
            f"span {span.name!r} of {self.service_name!r}: trace {span.trace_id.hex()}, span"
            f" {span.span_id.hex()}, parent {span.parent_span_id.hex() or '-'},"
            f" {json.dumps(self.attributes, default=str)}"
        )


@dataclass
class OtlpReceiver:
    """Runs on ``host``:``port`` (a free loopback port by default); ``spans`` holds every span
    received, in order (each also given to ``report``, if set). With ``tls`` (a certificate and
    its key, for localhost), over HTTPS."""

    port: int = 0
    spans: list[ReceivedSpan] = field(default_factory=list)
    content_types: list[str] = field(default_factory=list)
    tls: tuple[Path, Path] | None = None
    host: str = "127.0.0.1"
    report: Callable[[ReceivedSpan], None] | None = None
    _server: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        if self.tls is not None:
            return f"https://localhost:{self.port}/v1/traces"
        return f"http://{self.host}:{self.port}/v1/traces"

    def _record(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            service = next(
                (
                    a.value.string_value
                    for a in resource_spans.resource.attributes
                    if a.key == "service.name"
                ),
                "",
            )
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received = ReceivedSpan(service, scope_spans.scope.name, span)
                    self.spans.append(received)
                    if self.report is not None:
                        self.report(received)

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.path != "/v1/traces":
                    self._answer(404, b"")
                    return
                receiver.content_types.append(self.headers.get("content-type", ""))
                try:
                    receiver._record(body)
                except Exception:  # a body that is not OTLP: the exporter's fault
                    self._answer(400, b"")
                    return
                self._answer(200, ExportTraceServiceResponse().SerializeToString())

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        server = ThreadingHTTPServer((self.host, self.port), Handler)
        server.daemon_threads = True
        if self.tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            server.socket = context.wrap_socket(server.socket, server_side=True)
        self._server = server
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@contextmanager
def _by_hand(arguments: argparse.Namespace) -> Iterator[str]:
    with OtlpReceiver(
        port=arguments.port, host=arguments.host, report=lambda span: by_hand.say(str(span))
    ) as receiver:
        yield (
            f"OTLP/HTTP traces receiver {by_hand.LISTENING} {receiver.endpoint}"
            " (protobuf; a line for each span received)"
        )


if __name__ == "__main__":
    by_hand.serve(by_hand.command_line(__doc__.split("\n\n")[0], port=4318), _by_hand)
