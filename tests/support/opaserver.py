"""A policy engine speaking Open Policy Agent's REST data API, for tests and benchmarks.

No OPA binary ships in the registries this project installs from (PyPI, Debian, npm), so the
engine is Microsoft's rego-cpp (PyPI ``regopy``, a maintained Rego interpreter) behind a small
HTTP server in its own process. What it serves is OPA's wire contract as the gateway uses it:

* ``POST /v1/data/<path>`` with ``{"input": ...}`` → ``200 {"result": <document>}``, or
  ``200 {}`` when the document is undefined for that input (OPA's answer too);
  a body that is not JSON → ``400``; an evaluation error → ``500 {"code", "message"}``.
* ``GET /health`` → ``200 {}``.

Policies are ``.rego`` files given at start (``--policy``, repeatable). Each package path a
request names is compiled once per interpreter into a rego-cpp bundle and evaluated from it
(~0.5 ms a decision, against ~3 ms for a fresh query); the interpreters are pooled.

    python tests/support/opaserver.py --port 8181 --policy authz.rego [--cert cert-and-key.pem]

Self-contained (run as a script by :class:`OpaServer`): only the standard library and regopy.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import queue
import signal
import ssl
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# ------------------------------------------------------------------------------ the server


class _Engine:
    """Two rego-cpp interpreters, used by one thread at a time (they are not thread-safe):
    one compiling the policies into bundles, by data path, one evaluating them."""

    def __init__(self, modules: dict[str, str]) -> None:
        from regopy import Interpreter

        self.interpreter = Interpreter()
        for name, source in modules.items():
            self.interpreter.add_module(name, source)
        self.runner = Interpreter()
        self.bundles: dict[str, Any] = {}

    def evaluate(self, path: str, given: dict[str, Any]) -> tuple[bool, Any]:
        """(defined, value) of ``data.<path>`` for ``given`` (``{"input": ...}`` or ``{}``)."""
        from regopy import Interpreter

        bundle = self.bundles.get(path)
        if bundle is None:
            bundle = self.bundles[path] = self.interpreter.build(None, [path])
        # the input of the previous request would linger: a request without one gets a new one
        runner = self.runner if "input" in given else Interpreter()
        if "input" in given:
            runner.set_input(given["input"])
        output = runner.query_bundle_entrypoint(bundle, path)
        if not output.ok():
            raise RuntimeError(str(output))
        expressions = output.results[0].expressions if output.results else []
        return (True, expressions[0]) if expressions else (False, None)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the gateway's client pools its connections
    # the head and the body are two writes: without this, Nagle's algorithm holds the body
    # until the client's delayed ACK (40 ms a request)
    disable_nagle_algorithm = True

    def _answer(self, status: int, document: Any) -> None:
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/health":
            self._answer(200, {})
        else:
            self._data({})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            given = json.loads(raw) if raw else {}
        except ValueError:
            self._answer(400, {"code": "invalid_parameter", "message": "body is not JSON"})
            return
        self._data(given if isinstance(given, dict) else {})

    def _data(self, given: dict[str, Any]) -> None:
        route = self.path.split("?", 1)[0]
        if not route.startswith("/v1/data/"):
            self._answer(404, {"code": "resource_not_found", "message": route})
            return
        path = route.removeprefix("/v1/data/").strip("/")
        try:
            with _engine() as engine:
                defined, value = engine.evaluate(path, given)
        except Exception as error:  # rego-cpp's errors: an OPA 500
            self._answer(500, {"code": "internal_error", "message": str(error)})
            return
        self._answer(200, {"result": value} if defined else {})

    def log_message(self, format: str, *args: object) -> None:
        pass


_modules: dict[str, str] = {}
#: engines not in use: a thread takes one for a request and gives it back (a thread per
#: connection, and compiling costs milliseconds: engines outlive the connections)
_idle: queue.SimpleQueue[_Engine] = queue.SimpleQueue()


@contextlib.contextmanager
def _engine() -> Iterator[_Engine]:
    try:
        engine = _idle.get_nowait()
    except queue.Empty:
        engine = _Engine(_modules)
    try:
        yield engine
    finally:
        _idle.put(engine)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog is 5: a burst of new connections (a client whose pool
    # keeps fewer idle connections than it has requests in flight) would see SYNs dropped
    # and retried a second later
    request_queue_size = 1024


def serve(port: int, policies: list[Path], cert: Path | None = None) -> None:
    """Serve on loopback; over TLS when given ``cert`` (a PEM holding the key too)."""
    _modules.update({path.name: path.read_text() for path in policies})
    with _engine():  # compile errors show at start, not on the first request
        pass
    server = _Server(("127.0.0.1", port), _Handler)
    if cert is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    scheme = "https" if cert is not None else "http"
    print(f"OPA data API listening on {scheme}://127.0.0.1:{port}/v1/data/", flush=True)
    server.serve_forever()


if __name__ == "__main__":  # serves until stopped: the fixture below is not needed then
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8181)
    parser.add_argument("--policy", type=Path, action="append", default=[])
    parser.add_argument("--cert", type=Path, help="serve HTTPS: a PEM with the key too")
    arguments = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit())  # as Ctrl-C: status 0
    with contextlib.suppress(KeyboardInterrupt):
        serve(arguments.port, arguments.policy, arguments.cert)
    sys.exit()


# ------------------------------------------------------------------------------ the fixture

# Imported only here: run as a script (above), this module is no package's and could not.
from .process import ServerProcess  # noqa: E402


def _healthy(port: int, cert: Path | None) -> bool:
    connection: http.client.HTTPConnection
    if cert is None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=0.5)
    else:  # its own certificate is the one to trust
        context = ssl.create_default_context(cafile=str(cert))
        connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=0.5, context=context)
    try:
        connection.request("GET", "/health")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


class OpaServer(ServerProcess):
    """The server above in a subprocess on ``port`` (loopback), serving ``policies``; over
    TLS with ``cert`` (a PEM holding the certificate and its key). ``stop()`` then
    ``start()`` serves again on the same port."""

    name = "the policy server"
    start_timeout = 15.0
    append_log = True

    def __init__(
        self, port: int, policies: list[Path], log_path: Path, cert: Path | None = None
    ) -> None:
        self.policies = policies
        self.cert = cert
        super().__init__(log_path, ports=(port,))

    @property
    def url(self) -> str:
        return f"{'https' if self.cert else 'http'}://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        args = [sys.executable, __file__, "--port", str(self.port)]
        for policy in self.policies:
            args += ["--policy", str(policy)]
        if self.cert is not None:
            args += ["--cert", str(self.cert)]
        return args

    def is_ready(self) -> bool:
        return _healthy(self.port, self.cert)
