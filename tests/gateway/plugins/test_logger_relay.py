"""A logger that only reads the response head leaves the answer on the plain relay: the node's
head is relayed as it came and kept on ``ctx.response_head`` (a ``RelayedHead``), and the
logger's entry is still the one the path that takes the head apart gives (every header, in
order, credentials redacted). The signal that the plain relay was taken is the type of
``ctx.response_head``, read by a gateway observer after the log phase."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from portico.gateway.context import RelayedHead, RequestContext
from portico.gateway.environment_runtime import EnvironmentRuntime
from portico.gateway.node_options import GatewayOptions
from tests.gateway.plugins.test_observability_runtime import (
    REDACTED,
    Collector,
    Running,
    _collector_handler,
    _Servers,
    _start,
    _stop,
    environment,
    http_logger,
)
from tests.gateway.test_pipeline import plugin
from tests.support.waiting import eventually

BODY = b"made"


class Made(BaseHTTPRequestHandler):
    """Answers 201 with repeated headers and cookies (credentials the entry must redact); on
    ``/named/...`` it also names an X-Request-Id of its own, which the gateway must replace,
    so the head is taken apart."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response_only(201)  # (no Date nor Server: the entries compare whole)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Set-Cookie", "sid=backend-secret")
        self.send_header("X-Trace", "a")
        self.send_header("Set-Cookie", "theme=dark")
        self.send_header("X-Trace", "b")
        if self.path.startswith("/named/"):
            self.send_header("X-Request-Id", "the-node-s-own")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def backend() -> Iterator[int]:
    server = _Servers(("127.0.0.1", 0), Made)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def collector() -> Iterator[Collector]:
    found = Collector()
    server = _Servers(("127.0.0.1", 0), _collector_handler(found))
    found.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield found
    server.shutdown()
    server.server_close()


class Heads:
    """A gateway observer: what each request left on ``ctx.response_head``."""

    def __init__(self) -> None:
        self.seen: list[object] = []

    def __call__(self, env: EnvironmentRuntime, ctx: RequestContext) -> None:
        self.seen.append(ctx.response_head)


@dataclass
class Served:
    """A gateway in front of the backend, its observer, and the config version it is at."""

    running: Running
    heads: Heads
    backend: int
    version: int = 0

    async def apply(self, chain: list[dict[str, Any]]) -> None:
        self.version += 1
        await self.running.gw.apply(environment(self.backend, chain, version=self.version))


@pytest.fixture
async def served(backend: int) -> AsyncIterator[Served]:
    running, servers = await _start(GatewayOptions(node_id="node-1", egress_allow=("127.0.0.0/8",)))
    heads = Heads()
    running.gw.observers.append(heads)
    yield Served(running, heads, backend)
    await _stop(running, servers)


async def logged_answer(
    served: Served, collector: Collector, chain: list[dict[str, Any]], path: str
) -> tuple[dict[str, Any], str]:
    """The response part of the entry logged for one GET of ``path`` through ``chain``, and
    the request id the client got."""
    await served.apply(chain)
    before = len(collector.entries())
    response = await served.running.client.get(path)
    assert response.status_code == 201
    assert response.content == BODY
    await eventually(lambda: len(collector.entries()) == before + 1)
    entry = collector.entries()[-1]
    return entry["response"], response.headers["x-request-id"]


def limit_count() -> dict[str, Any]:
    """A plugin that only sets response headers (X-RateLimit-*): still the plain relay."""
    return plugin("limit-count", 210, count=1000, time_window=60, key_type="constant", key="all")


def cors() -> dict[str, Any]:
    """A header filter that edits: the head is taken apart, as before."""
    return plugin("cors", 30, allow_origins="*", expose_headers="*")


async def test_an_observed_answer_is_logged_as_the_filtered_path_logs_it(
    served: Served, collector: Collector
) -> None:
    heads = served.heads
    # the body logged: the logger's header filter runs (the head taken apart), as before
    filtered, _ = await logged_answer(
        served, collector, [http_logger(collector.url(), include_resp_body=True)], "/a/1"
    )
    assert heads.seen[-1] is None
    # headers only: relayed as it came, the entry built from the head kept
    relayed, relayed_id = await logged_answer(
        served, collector, [http_logger(collector.url())], "/a/2"
    )
    assert isinstance(heads.seen[-1], RelayedHead)

    expected = [
        ("content-type", "text/plain"),
        ("set-cookie", [REDACTED, REDACTED]),
        ("x-trace", ["a", "b"]),
        ("content-length", str(len(BODY))),
        ("x-request-id", relayed_id),
    ]
    assert relayed["status"] == 201
    assert list(relayed["headers"].items()) == expected
    assert relayed["size"] == filtered["size"]
    assert "body" not in relayed
    assert filtered.pop("body") == BODY.decode()
    filtered["headers"]["x-request-id"] = relayed_id
    assert json.dumps(relayed) == json.dumps(filtered)  # the same entry, key order included


async def test_headers_a_plugin_sets_are_logged_from_the_relayed_head(
    served: Served, collector: Collector
) -> None:
    heads = served.heads
    answer, request_id = await logged_answer(
        served, collector, [limit_count(), http_logger(collector.url())], "/a/1"
    )
    assert isinstance(heads.seen[-1], RelayedHead)
    names = list(answer["headers"])
    assert names[:4] == ["content-type", "set-cookie", "x-trace", "content-length"]
    assert answer["headers"]["x-ratelimit-limit"] == "1000"
    assert answer["headers"]["x-ratelimit-remaining"] == "999"
    assert names[-1] == "x-request-id"
    assert answer["headers"]["x-request-id"] == request_id


@pytest.mark.parametrize(
    ("chain", "relayed"),
    [
        pytest.param(lambda url: [http_logger(url)], True, id="logger"),
        pytest.param(lambda url: [limit_count(), http_logger(url)], True, id="logger-limit"),
        pytest.param(lambda url: [cors(), http_logger(url)], False, id="logger-cors"),
        pytest.param(
            lambda url: [http_logger(url, include_resp_body=True)], False, id="logger-with-body"
        ),
    ],
)
async def test_only_chains_whose_filters_all_observe_keep_the_plain_relay(
    served: Served, collector: Collector, chain: Any, relayed: bool
) -> None:
    heads = served.heads
    answer, request_id = await logged_answer(served, collector, chain(collector.url()), "/a/1")
    assert isinstance(heads.seen[-1], RelayedHead) is relayed
    assert heads.seen[-1] is None or relayed
    assert answer["status"] == 201
    assert answer["headers"]["x-trace"] == ["a", "b"]
    assert answer["headers"]["x-request-id"] == request_id


async def test_a_head_that_must_be_taken_apart_still_reaches_the_observers(
    served: Served, collector: Collector
) -> None:
    """The node names an X-Request-Id: the gateway's replaces it, so the head is rebuilt and
    the logger's header filter runs after all."""
    heads = served.heads
    answer, request_id = await logged_answer(
        served, collector, [http_logger(collector.url())], "/named/1"
    )
    assert heads.seen[-1] is None
    assert answer["headers"]["x-request-id"] == request_id != "the-node-s-own"
    assert answer["headers"]["set-cookie"] == [REDACTED, REDACTED]
    assert list(answer["headers"])[-1] == "x-request-id"
