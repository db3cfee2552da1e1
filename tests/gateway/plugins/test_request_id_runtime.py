"""request-id at run time, over real sockets: the gateway's own request id configured by the
route's plugin (its header, whether the client gets it, how it is made), the same id seen by
the upstream, the client, the loggers' entries and the traces."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from portico.gateway.node_options import GatewayOptions
from portico.gateway.plugins.registry import PluginCheckError, check_plugin
from portico.gateway.snapshot import content_hash
from tests.gateway.plugins.test_observability_runtime import (
    Collector,
    Running,
    _start,
    _stop,
    http_logger,
)
from tests.gateway.plugins.test_observability_runtime import (
    collector as collector,  # (a fixture)
)
from tests.gateway.test_pipeline import plugin, snapshot
from tests.support.otlpreceiver import OtlpReceiver
from tests.support.waiting import eventually

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


@pytest.fixture
async def gateway() -> AsyncIterator[Running]:
    running, servers = await _start(GatewayOptions(node_id="node-1", egress_allow=("127.0.0.0/8",)))
    yield running
    await _stop(running, servers)


class _OwnIds(BaseHTTPRequestHandler):
    """A backend that answers with request-id headers of its own, and says what it got."""

    def do_GET(self) -> None:
        seen = f"{self.headers.get('x-correlation-id')}|{self.headers.get('x-request-id')}"
        body = seen.encode()
        self.send_response(200)
        self.send_header("X-Correlation-Id", "from-the-backend")
        self.send_header("X-Request-Id", "backend-own")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def own_ids_backend() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OwnIds)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def request_id(**config: Any) -> dict[str, Any]:
    _, checked = check_plugin("request-id", config)
    return plugin("request-id", 5, **checked.model_dump(mode="json", exclude={"meta"}))


async def test_defaults_make_uuids_and_keep_a_valid_incoming_id(
    gateway: Running, backend: int
) -> None:
    await gateway.gw.apply(snapshot(backend, [request_id()]))
    ids = [(await gateway.client.get("/x")).headers["x-request-id"] for _ in range(2)]
    assert all(UUID.fullmatch(i) for i in ids) and ids[0] != ids[1]
    answer = await gateway.client.get("/x")
    assert answer.json()["headers"]["x-request-id"] == answer.headers["x-request-id"]
    kept = await gateway.client.get("/x", headers={"X-Request-Id": "client-7.a:b"})
    assert kept.headers["x-request-id"] == "client-7.a:b"
    assert kept.json()["headers"]["x-request-id"] == "client-7.a:b"
    forged = await gateway.client.get("/x", headers={"X-Request-Id": "a b\tc"})
    assert UUID.fullmatch(forged.headers["x-request-id"])


async def test_a_header_of_its_own_replaces_the_backend_s_and_leaves_x_request_id_alone(
    gateway: Running, own_ids_backend: int
) -> None:
    await gateway.gw.apply(snapshot(own_ids_backend, [request_id(header_name="X-Correlation-Id")]))
    answer = await gateway.client.get("/x", headers={"X-Request-Id": "client-own"})
    correlation = answer.headers.get_list("x-correlation-id")
    assert len(correlation) == 1 and UUID.fullmatch(correlation[0])
    # upstream got the id in the plugin's header; the client's X-Request-Id went as it came
    assert answer.text == f"{correlation[0]}|client-own"
    # the backend's own X-Request-Id is its business now: relayed
    assert answer.headers.get_list("x-request-id") == ["backend-own"]
    kept = await gateway.client.get("/x", headers={"X-Correlation-Id": "abc-123"})
    assert kept.headers.get_list("x-correlation-id") == ["abc-123"]
    assert kept.text.startswith("abc-123|")


async def test_include_in_response_false_keeps_it_from_answers_even_refusals(
    gateway: Running, backend: int
) -> None:
    chain = [request_id(include_in_response=False), plugin("key-auth", 100, header="apikey")]
    await gateway.gw.apply(snapshot(backend, chain))
    refused = await gateway.client.get("/x")
    assert refused.status_code == 401
    assert "x-request-id" not in refused.headers
    document = snapshot(backend, [request_id(include_in_response=False)], version=2)
    await gateway.gw.apply(document)
    answer = await gateway.client.get("/x")
    assert "x-request-id" not in answer.headers
    assert UUID.fullmatch(answer.json()["headers"]["x-request-id"])  # upstream still has it


async def test_range_id_draws_its_characters_and_length(gateway: Running, backend: int) -> None:
    config = request_id(algorithm="range_id", range_id={"char_set": "abc123", "length": 24})
    await gateway.gw.apply(snapshot(backend, [config]))
    seen = set()
    for _ in range(80):  # (more than one batch of random bytes)
        answer = await gateway.client.get("/x")
        value = answer.headers["x-request-id"]
        assert re.fullmatch(r"[abc123]{24}", value), value
        seen.add(value)
    assert len(seen) == 80


async def test_logs_and_traces_record_the_same_id_as_the_client_gets(
    gateway: Running, backend: int, collector: Collector
) -> None:
    with OtlpReceiver() as receiver:
        chain = [
            request_id(header_name="X-Trace-Me"),
            plugin(
                "trace-export",
                910,
                endpoint=receiver.endpoint,
                additional_attributes=["$request_id"],
            ),
            http_logger(collector.url()),
        ]
        await gateway.gw.apply(snapshot(backend, chain))
        answer = await gateway.client.get("/x")
        given = answer.headers["x-trace-me"]
        await eventually(lambda: len(collector.entries()) == 1, what="the entry sent")
        assert collector.entries()[0]["request_id"] == given
        assert collector.entries()[0]["response"]["headers"]["x-trace-me"] == given
        await eventually(lambda: len(receiver.spans) == 1, what="the span exported")
        assert receiver.spans[0].attributes["request_id"] == given


async def test_routes_without_the_plugin_keep_the_gateway_s_own_ids(
    gateway: Running, backend: int
) -> None:
    document = snapshot(backend, [request_id(header_name="X-Correlation-Id")])
    plain = dict(document["routes"][0], id="rev:1", uri="/plain", priority=10, plugins=[])
    document["routes"].append(plain)
    document["content_hash"] = content_hash(document)
    await gateway.gw.apply(document)
    answer = await gateway.client.get("/plain")
    assert re.fullmatch(r"[0-9a-f]{32}", answer.headers["x-request-id"])
    assert "x-correlation-id" not in answer.headers


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"algorithm": "nanoid"}, "$.algorithm: must be one of 'uuid' or 'range_id'"),
        ({"header_name": "bad header"}, "$.header_name: does not match the pattern"),
        (
            {"range_id": {"char_set": "ab c"}},
            "char_set must hold only letters, digits and '._:-' (an id must be kept when it "
            "comes back); ' ' is not one",
        ),
        ({"range_id": {"length": 4}}, "$.range_id.length: must be greater than or equal to 8"),
        ({"_meta": {"order": 1}}, 'property "_meta" is not allowed'),
    ],
)
def test_configurations_it_refuses(config: dict[str, Any], reason: str) -> None:
    with pytest.raises(PluginCheckError) as refused:
        check_plugin("request-id", config)
    assert refused.value.reason.startswith(reason), refused.value.reason


def test_it_is_not_a_consumer_plugin() -> None:
    from portico.core.sealing import SecretBox
    from portico.management.consumer.credentials import prepare

    with pytest.raises(PluginCheckError) as refused:
        prepare("request-id", {}, None, SecretBox([hashlib.sha256(b"k").hexdigest()]))
    assert refused.value.reason == (
        "request-id acts before the consumer is known; attach it to a service or a route"
    )
