"""http-logger, the batch processor and metrics-export at run time, over real sockets: a
Gateway on loopback in front of a real backend, a collector of our own recording what the
logger POSTs, and the status listener's ``/metrics`` parsed as Prometheus text."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from portico.gateway.gateway import Gateway
from portico.gateway.http.server import serve
from portico.gateway.node_options import GatewayOptions
from portico.gateway.plugins._batching import BatchingConfig
from portico.gateway.snapshot import content_hash
from portico.gateway.status import status_handler
from portico.gateway.telemetry import batch as batch_module
from portico.gateway.telemetry.batch import BatchFailed, BatchProcessor
from tests.e2e.test_gateway import Echo
from tests.gateway.test_pipeline import HOST, plugin, snapshot
from tests.support.waiting import eventually

ALICE_KEY = "alice-key-0123456789"
REDACTED = "[REDACTED]"

# ---------------------------------------------------------------------- servers


@dataclass
class Post:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Collector:
    """Records every POST; answers ``status``, or holds the request while ``hang`` is set."""

    port: int = 0
    status: int = 200
    posts: list[Post] = field(default_factory=list)
    hang: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str = "/ingest") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def entries(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for post in self.posts:
            found.extend(json.loads(post.body))
        return found


def _collector_handler(collector: Collector) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            collector.posts.append(Post(self.path, headers, body))
            if collector.hang.is_set():
                collector.release.wait(30)
                return
            self.send_response(collector.status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return

    return Handler


class _Servers(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # concurrent requests must not wait out a SYN retry


@pytest.fixture
def collector() -> Iterator[Collector]:
    found = Collector()
    server = _Servers(("127.0.0.1", 0), _collector_handler(found))
    found.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield found
    found.release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def backend() -> Iterator[int]:
    server = _Servers(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@dataclass
class Running:
    gw: Gateway
    client: httpx.AsyncClient
    status: httpx.AsyncClient

    async def metrics(self) -> str:
        response = await self.status.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
        return response.text


#: the wall clock of the gateways here (``Gateway(now=...)``), which http-logger's entries
#: are stamped with
NOW = 1_800_000_000.0


async def _start(options: GatewayOptions) -> tuple[Running, list[asyncio.Server]]:
    gw = Gateway(options=options, now=lambda: NOW)
    traffic = await serve(gw.handle, "127.0.0.1", 0)
    status = await serve(status_handler(gw), "127.0.0.1", 0)
    port = traffic.sockets[0].getsockname()[1]
    status_port = status.sockets[0].getsockname()[1]
    running = Running(
        gw,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers={"Host": HOST}, timeout=10),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{status_port}", timeout=10),
    )
    return running, [traffic, status]


async def _stop(running: Running, servers: list[asyncio.Server]) -> None:
    await running.client.aclose()
    await running.status.aclose()
    for server in servers:
        server.close()
    await running.gw.close()


@pytest.fixture
async def gateway() -> AsyncIterator[Running]:
    """A gateway allowed to reach loopback (where the collector listens)."""
    running, servers = await _start(GatewayOptions(node_id="node-1", egress_allow=("127.0.0.0/8",)))
    yield running
    await _stop(running, servers)


@pytest.fixture
async def guarded_gateway() -> AsyncIterator[Running]:
    """A gateway with the default SSRF guard: loopback is refused."""
    running, servers = await _start(GatewayOptions(node_id="node-1"))
    yield running
    await _stop(running, servers)


# ---------------------------------------------------------------------- helpers


def environment(
    backend: int,
    plugins: list[dict[str, Any]],
    *,
    version: int = 1,
    plain_route: bool = False,
    with_alice: bool = False,
) -> dict[str, Any]:
    """test_pipeline's snapshot, its route named ("orders" of API "shop"), optionally with a
    second route without plugins (/plain/*) and a key-auth consumer alice."""
    document = snapshot(backend, plugins, version=version)
    route = document["routes"][0]
    route.update(api_name="shop", name="orders")
    if plain_route:
        plain = copy.deepcopy(route)
        plain.update(id="rev:1", name="plain", uri="/plain/*", priority=10, plugins=[])
        document["routes"].append(plain)
    if with_alice:
        key_hash = hashlib.sha256(ALICE_KEY.encode()).hexdigest()
        document["consumers"] = [
            {"id": "c-1", "username": "alice", "credentials": {"key-auth": {"key_hash": key_hash}}}
        ]
    document["content_hash"] = content_hash(document)
    return document


def key_auth() -> dict[str, Any]:
    return plugin("key-auth", 100, header="apikey", query="apikey", hide_credentials=False)


def http_logger(uri: str, **config: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {
        "uri": uri,
        "timeout": 3,
        "include_req_body": False,
        "include_resp_body": False,
        "concat_method": "json",
        "batch_max_size": 1,
        "inactive_timeout": 1,
        "buffer_duration": 60,
        "max_retry_count": 0,
        "retry_delay": 0,
    }
    return plugin("http-logger", 950, **{**defaults, **config})


async def until_metric(running: Running, name: str, labels: dict[str, str], value: float) -> None:
    async def reached() -> bool:
        return sample(await running.metrics(), name, labels) == value

    await eventually(reached, interval=0.05, what=f"{name}{labels} reaching {value}")


def sample(text: str, name: str, labels: dict[str, str]) -> float | None:
    for family in text_string_to_metric_families(text):
        for found in family.samples:
            if found.name == name and found.labels == labels:
                return float(found.value)
    return None


def samples(text: str, name: str) -> list[dict[str, str]]:
    return [
        found.labels
        for family in text_string_to_metric_families(text)
        for found in family.samples
        if found.name == name
    ]


# ---------------------------------------------------------------------- http-logger


async def test_an_entry_carries_apisix_fields_with_credentials_redacted(
    gateway: Running, backend: int, collector: Collector
) -> None:
    logger = http_logger(
        collector.url(),
        auth_header="Bearer collector-token",
        include_req_body=True,
        include_resp_body=True,
    )
    await gateway.gw.apply(environment(backend, [key_auth(), logger], with_alice=True))
    response = await gateway.client.post(
        "/orders/7?page=2&apikey=" + ALICE_KEY,
        content=b'{"item": "book"}',
        headers={
            "apikey": ALICE_KEY,
            "authorization": "Bearer client-token",
            "cookie": "session=cookie-secret",
            "content-type": "application/json",
        },
    )
    assert response.status_code == 200
    await eventually(lambda: len(collector.posts) == 1)
    post = collector.posts[0]
    assert post.path == "/ingest"
    assert post.headers["authorization"] == "Bearer collector-token"
    assert post.headers["content-type"] == "application/json"
    [entry] = json.loads(post.body)  # a JSON array, even of one entry

    request = entry["request"]
    assert request["method"] == "POST"
    assert request["uri"] == f"/orders/7?page=2&apikey={REDACTED}"
    assert request["url"] == f"http://{HOST}/orders/7?page=2&apikey={REDACTED}"
    assert request["querystring"] == {"page": "2", "apikey": REDACTED}
    assert request["headers"]["apikey"] == REDACTED
    assert request["headers"]["authorization"] == REDACTED
    assert request["headers"]["cookie"] == REDACTED
    assert request["headers"]["content-type"] == "application/json"
    assert request["size"] == len(b'{"item": "book"}')
    assert request["body"] == '{"item": "book"}'

    answer = entry["response"]
    assert answer["status"] == 200
    assert answer["headers"]["content-type"] == "application/json"
    assert answer["headers"]["x-request-id"] == response.headers["x-request-id"]
    assert answer["size"] == len(response.content)
    assert json.loads(answer["body"]) == response.json()  # the tee copied what was sent

    assert entry["upstream"] == f"127.0.0.1:{backend}"
    assert entry["latency"] >= entry["upstream_latency"] >= 0
    assert entry["client_ip"] == "127.0.0.1"
    assert entry["route_id"] == "rev:0"
    assert entry["route_name"] == "orders"
    assert (entry["api_id"], entry["api_name"]) == ("api", "shop")
    assert entry["environment_id"] == "env"
    assert entry["consumer"] == {"username": "alice"}
    assert entry["request_id"] == response.headers["x-request-id"]
    assert entry["server"]["hostname"] == "node-1"
    # epoch milliseconds: the gateway's clock when the entry was made, less the request's time
    # so far (a minute bounds it generously)
    assert NOW * 1000 - 60_000 <= entry["start_time"] <= NOW * 1000

    # no credential anywhere but in the response body, which is the upstream's own echo
    logged = json.dumps({k: v for k, v in entry.items() if k != "response"})
    logged += json.dumps(answer["headers"])
    for secret in (ALICE_KEY, "client-token", "cookie-secret", "collector-token"):
        assert secret not in logged


async def test_batch_max_size_one_sends_each_entry_alone(
    gateway: Running, backend: int, collector: Collector
) -> None:
    await gateway.gw.apply(environment(backend, [http_logger(collector.url())]))
    for n in range(3):
        assert (await gateway.client.get(f"/item/{n}")).status_code == 200
    await eventually(lambda: len(collector.posts) == 3)
    batches = [json.loads(post.body) for post in collector.posts]
    assert [len(b) for b in batches] == [1, 1, 1]
    assert sorted(b[0]["request"]["uri"] for b in batches) == ["/item/0", "/item/1", "/item/2"]


async def test_inactive_timeout_sends_a_partial_batch_as_lines(
    gateway: Running, backend: int, collector: Collector
) -> None:
    logger = http_logger(
        collector.url(), batch_max_size=100, inactive_timeout=1, concat_method="new_line"
    )
    await gateway.gw.apply(environment(backend, [logger]))
    for n in range(3):
        assert (await gateway.client.get(f"/item/{n}")).status_code == 200
    await eventually(lambda: len(collector.posts) == 1)
    lines = collector.posts[0].body.split(b"\n")
    assert [json.loads(line)["request"]["uri"] for line in lines] == [
        "/item/0",
        "/item/1",
        "/item/2",
    ]


async def test_a_failing_collector_is_retried_then_the_batch_is_dropped_and_counted(
    gateway: Running, backend: int, collector: Collector
) -> None:
    collector.status = 500
    logger = http_logger(collector.url(), max_retry_count=2, retry_delay=0)
    await gateway.gw.apply(environment(backend, [logger]))
    assert (await gateway.client.get("/x")).status_code == 200
    await until_metric(gateway, "portico_log_entries_dropped_total", {"plugin": "http-logger"}, 1)
    assert len(collector.posts) == 3  # the first try and two retries


async def test_a_loopback_endpoint_is_refused_without_the_egress_allowance(
    guarded_gateway: Running, backend: int, collector: Collector
) -> None:
    await guarded_gateway.gw.apply(environment(backend, [http_logger(collector.url())]))
    assert (await guarded_gateway.client.get("/x")).status_code == 200
    await until_metric(
        guarded_gateway, "portico_log_entries_dropped_total", {"plugin": "http-logger"}, 1
    )
    assert collector.posts == []


async def test_a_hanging_collector_never_holds_requests(
    gateway: Running, backend: int, collector: Collector
) -> None:
    collector.hang.set()
    await gateway.gw.apply(environment(backend, [http_logger(collector.url(), timeout=1)]))
    statuses = await asyncio.gather(*(gateway.client.get(f"/n/{n}") for n in range(20)))
    assert [r.status_code for r in statuses] == [200] * 20
    await eventually(lambda: len(collector.posts) >= 1)  # the logger is stuck on the first batch
    assert (await gateway.client.get("/after")).status_code == 200


async def test_an_unchanged_logger_keeps_its_batch_across_a_deploy(
    gateway: Running, backend: int, collector: Collector
) -> None:
    logger = http_logger(collector.url(), batch_max_size=4, inactive_timeout=3600)
    await gateway.gw.apply(environment(backend, [logger]))
    for n in range(2):
        await gateway.client.get(f"/before/{n}")
    await gateway.gw.apply(environment(backend, [logger], version=2, plain_route=True))
    for n in range(2):
        await gateway.client.get(f"/after/{n}")
    await eventually(lambda: len(collector.posts) == 1)
    assert [e["request"]["uri"] for e in collector.entries()] == [
        "/before/0",
        "/before/1",
        "/after/0",
        "/after/1",
    ]


async def test_a_replaced_logger_sends_what_it_held_when_retired(
    gateway: Running, backend: int, collector: Collector
) -> None:
    old = http_logger(collector.url("/old"), batch_max_size=100, inactive_timeout=3600)
    await gateway.gw.apply(environment(backend, [old]))
    for n in range(2):
        await gateway.client.get(f"/n/{n}")
    assert collector.posts == []
    new = http_logger(collector.url("/new"), batch_max_size=100, inactive_timeout=3600)
    await gateway.gw.apply(environment(backend, [new], version=2))
    await eventually(lambda: len(collector.posts) == 1)
    assert collector.posts[0].path == "/old"
    assert len(json.loads(collector.posts[0].body)) == 2


async def test_stopping_the_gateway_sends_what_is_pending(
    backend: int, collector: Collector
) -> None:
    running, servers = await _start(GatewayOptions(egress_allow=("127.0.0.0/8",)))
    logger = http_logger(collector.url(), batch_max_size=100, inactive_timeout=3600)
    await running.gw.apply(environment(backend, [logger]))
    for n in range(3):
        await running.client.get(f"/n/{n}")
    assert collector.posts == []
    await _stop(running, servers)  # the shared HTTP client closes first: a client of its own
    assert len(collector.entries()) == 3


# ---------------------------------------------------------------------- the batch processor


def settings(**values: Any) -> BatchingConfig:
    return BatchingConfig.model_validate(
        {"inactive_timeout": 1, "buffer_duration": 60, "retry_delay": 0, **values}
    )


async def test_buffer_duration_sends_a_batch_however_busy_the_route() -> None:
    sent: list[list[int]] = []

    async def send(entries: list[int]) -> None:
        sent.append(entries)

    processor = BatchProcessor("test", settings(buffer_duration=1, inactive_timeout=5), send)
    pushed = 0
    deadline = time.monotonic() + 10
    while not sent:  # an entry every 0.1 s: the batch is never inactive for 5 s
        assert time.monotonic() < deadline
        processor.push(pushed)
        pushed += 1
        await asyncio.sleep(0.1)  # (the behaviour: the traffic's pace, never 5 s idle)
    assert sent[0] == list(range(len(sent[0])))
    assert len(sent[0]) < pushed + 1
    await processor.aclose()


async def test_pending_entries_are_capped_then_dropped_and_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(batch_module, "MAX_PENDING_ENTRIES", 5)
    release = asyncio.Event()
    counted: list[int] = []

    async def stuck(entries: list[int]) -> None:
        await release.wait()

    processor = BatchProcessor(
        "test", settings(batch_max_size=1), stuck, dropped=counted.append, close_grace=0.1
    )
    for n in range(12):
        processor.push(n)
    assert processor.pending == 5
    assert sum(counted) == 7
    await processor.aclose()  # the stuck send is abandoned after the grace: counted too
    assert sum(counted) == 12
    assert processor.pending == 0


async def test_close_sends_what_is_pending_once() -> None:
    calls: list[list[int]] = []

    async def failing(entries: list[int]) -> None:
        calls.append(entries)
        raise BatchFailed("the endpoint answered 503")

    counted: list[int] = []
    processor = BatchProcessor(
        "test",
        settings(batch_max_size=10, inactive_timeout=3600, max_retry_count=5),
        failing,
        dropped=counted.append,
    )
    processor.push(1)
    processor.push(2)
    await processor.aclose()
    assert calls == [[1, 2]]  # one attempt: closing does not wait out retries
    assert counted == [2]
    processor.push(3)  # after close: counted, never queued
    assert counted == [2, 1]


# ---------------------------------------------------------------------- metrics-export


async def test_metrics_count_requests_by_route_consumer_and_code(
    gateway: Running, backend: int
) -> None:
    await gateway.gw.apply(
        environment(
            backend,
            [key_auth(), plugin("metrics-export", 900, prefer_name=False)],
            with_alice=True,
            plain_route=True,
        )
    )
    for n in range(3):
        response = await gateway.client.get(f"/orders/{n}", headers={"apikey": ALICE_KEY})
        assert response.status_code == 200
    assert (await gateway.client.get("/orders/x", headers={"apikey": "wrong-key-000"})).status_code
    assert (await gateway.client.get("/plain/x")).status_code == 200  # no plugin: not counted

    text = await gateway.metrics()
    route = {"env": "env", "api": "api", "route": "rev:0"}
    alice = {**route, "consumer": "alice"}
    node = f"127.0.0.1:{backend}"
    total = "portico_http_requests_total"
    assert sample(text, total, {**alice, "code": "200", "node": node}) == 3
    assert sample(text, total, {**route, "consumer": "", "code": "401", "node": ""}) == 1
    assert all(labels["route"] == "rev:0" for labels in samples(text, total))
    assert len(samples(text, total)) == 2

    count = "portico_http_latency_seconds_count"
    assert sample(text, count, {"type": "request", **alice}) == 3
    assert sample(text, count, {"type": "upstream", **alice}) == 3
    bucket = "portico_http_latency_seconds_bucket"
    assert sample(text, bucket, {"type": "request", **alice, "le": "+Inf"}) == 3
    assert sample(text, bucket, {"type": "request", **alice, "le": "60.0"}) == 3
    egress = sample(text, "portico_bandwidth_bytes_total", {"type": "egress", **alice})
    assert egress is not None and egress > 0
    assert sample(text, "portico_bandwidth_bytes_total", {"type": "ingress", **alice}) == 0


async def test_prefer_name_labels_series_by_api_and_route_names(
    gateway: Running, backend: int
) -> None:
    await gateway.gw.apply(environment(backend, [plugin("metrics-export", 900, prefer_name=True)]))
    assert (await gateway.client.get("/x")).status_code == 200
    text = await gateway.metrics()
    labels = {"env": "env", "api": "shop", "route": "orders", "consumer": ""}
    node = f"127.0.0.1:{backend}"
    assert sample(text, "portico_http_requests_total", {**labels, "code": "200", "node": node}) == 1


async def test_the_gateway_exports_its_own_state_without_the_plugin(
    gateway: Running, backend: int
) -> None:
    await gateway.gw.apply(environment(backend, []))
    text = await gateway.metrics()
    assert sample(text, "portico_config_version", {"env": "env"}) == 1
    assert sample(text, "portico_environment_info", {"env": "env", "name": "test"}) == 1
    node = {"upstream": "up", "node": f"127.0.0.1:{backend}"}
    assert sample(text, "portico_upstream_node_healthy", node) == 1
    assert samples(text, "portico_http_requests_total") == []
    await gateway.gw.apply(environment(backend, [], version=7))
    assert sample(await gateway.metrics(), "portico_config_version", {"env": "env"}) == 7


async def test_two_gateways_keep_separate_registries(backend: int) -> None:
    first, second = Gateway(), Gateway()
    try:
        document = environment(backend, [plugin("metrics-export", 900, prefer_name=False)])
        await first.apply(document)
        await second.apply(environment(backend, [], version=3))
        assert b'portico_config_version{env="env"} 1.0' in first.metrics.exposition()
        assert b'portico_config_version{env="env"} 3.0' in second.metrics.exposition()
    finally:
        await first.close()
        await second.close()
