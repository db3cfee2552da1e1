"""trace-export and waf, each against its real server on loopback.

* trace-export: every request sampled (``sample_ratio`` 1), spans batched and POSTed as OTLP
  protobuf to a receiver that reads and acknowledges them. Goal 0.9 (the issue's, as loggers).
* waf: every request inspected by ``portico waf-engine`` (ModSecurity v3 + the OWASP Core
  Rule Set, a separate process on the same machine). This is not a cheap plugin and its goal
  says so: each request costs a network round trip to the engine and the Core Rule Set's
  evaluation, 1.2 to 1.5 ms of CPU per clean GET on this machine (process time of
  ``RuleEngine.inspect`` in a loop; a bare ModSecurity transaction without the CRS takes
  0.12 ms). The ratio is the engine's throughput over the gateway's: wrk straight at the
  engine gave 250 requests/s on one connection and 440 on two (4 ms each with the CRS,
  0.9 ms without it: the rules, not the HTTP server, are the cost) while the gateway alone
  forwards 4000-6000 on the same, shared, 2-core box. Hence the goal 0.05. A production
  engine gets cores of its own: its threads evaluate in parallel (ctypes releases the GIL
  while libmodsecurity works), so its throughput grows with them.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench_gateway import free_port
from bench_plugins import Case, Setup

SRC = Path(__file__).resolve().parents[2] / "src"


class _OtlpReceiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def _collector(work: Path) -> Iterator[Setup]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OtlpReceiver)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
        config = {"endpoint": endpoint, "sample_ratio": 1.0, "service_name": "bench"}
        plugin = {"name": "trace-export", "scope": "route", "order": 910, "config": config}
        yield Setup(attach=[plugin])
    finally:
        server.shutdown()
        server.server_close()


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=0.5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@contextlib.contextmanager
def _waf_engine(work: Path) -> Iterator[Setup]:
    port = free_port()
    log = (work / "waf-engine.log").open("wb")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    engine = subprocess.Popen(
        [sys.executable, "-m", "portico.cli", "waf-engine", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while not _healthy(port):
            if engine.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the WAF engine did not start; see {log.name}")
            time.sleep(0.05)
        config = {"host": "127.0.0.1", "port": port, "timeout": 2000, "fail_open": False}
        plugin = {"name": "waf", "scope": "route", "order": 50, "config": config}
        yield Setup(attach=[plugin], headers={"user-agent": "bench/1.0", "accept": "*/*"})
    finally:
        engine.terminate()
        engine.wait(10)
        log.close()


CASES = [Case("trace-export", 0.9, _collector), Case("waf", 0.05, _waf_engine)]
