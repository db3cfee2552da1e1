"""Telemetry through real sockets: every routed request lands in a per-minute rollup; shipping
failures keep the data; memory stays bounded and what is lost is counted."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from portico.gateway.gateway import Gateway
from portico.gateway.snapshot import content_hash
from portico.gateway.telemetry.rollups import (
    SKETCH_ACCURACY,
    SKETCH_MAX_INDEX,
    Batch,
    Rollup,
    TelemetryRecorder,
    sketch_index,
    sketch_value,
)
from tests.gateway import test_pipeline
from tests.gateway.test_pipeline import plugin, running, snapshot

backend = test_pipeline.backend  # the fixture

NOW = 1_790_000_000.0  # a fixed clock: every request falls into one minute


def counted(sketch: str) -> int:
    """The values a wire sketch ('bin=count,...') holds."""
    return sum(int(pair.split("=")[1]) for pair in sketch.split(",") if pair)


class Collector:
    """A sink that keeps what it is given, or fails while ``failing`` is set."""

    def __init__(self) -> None:
        self.batches: list[Batch] = []
        self.failing = False

    async def __call__(self, batch: Batch) -> None:
        if self.failing:
            raise ConnectionError("control plane unreachable")
        self.batches.append(batch)

    def documents(self) -> list[dict[str, Any]]:
        return [doc for b in self.batches for doc in b.documents("env")]


@pytest.fixture
async def traffic() -> AsyncIterator[tuple[Gateway, httpx.AsyncClient]]:
    gw = Gateway()
    async with running(gw) as client:
        yield gw, client


def with_key_auth(backend: int) -> dict[str, Any]:
    document = snapshot(backend, [plugin("key-auth", 100)])
    document["consumers"] = [
        {
            "id": "c1",
            "username": "alice",
            "credentials": {"key-auth": {"key_hash": hashlib.sha256(b"alice-key").hexdigest()}},
            "plugins": [],
            "app": {
                "id": "app-1",
                "name": "Mobile",
                "developer_id": "dev-1",
                "developer_email": "dev@example.com",
                "product_ids": [],
            },
        }
    ]
    document["content_hash"] = content_hash(document)
    return document


async def test_each_routed_request_is_folded_into_a_rollup(
    traffic: tuple[Gateway, httpx.AsyncClient], backend: int
) -> None:
    gw, client = traffic
    sink = Collector()
    recorder = TelemetryRecorder(sink, now=lambda: NOW)
    gw.observers.append(recorder.observe)
    await gw.apply(with_key_auth(backend))
    for _ in range(3):
        ok = await client.post("/a", content=b"12345", headers={"apikey": "alice-key"})
        assert ok.status_code == 200
    assert (await client.get("/a")).status_code == 401
    assert (await client.get("/a", headers={"Host": "unknown.example"})).status_code == 404
    assert await recorder.ship()
    documents = {(d["method"], d["status"]): d for d in sink.documents()}
    assert set(documents) == {("POST", 200), ("GET", 401)}  # the unknown host never routed
    ok_rollup = documents[("POST", 200)]
    assert ok_rollup["consumer"] == "alice"
    assert (ok_rollup["apiId"], ok_rollup["routeId"]) == ("api", "rev:0")
    assert (ok_rollup["appId"], ok_rollup["developerId"], ok_rollup["productId"]) == (
        "app-1",
        "dev-1",
        "",
    )
    assert (ok_rollup["appName"], ok_rollup["developerEmail"]) == ("Mobile", "dev@example.com")
    assert ok_rollup["apiPath"] == ok_rollup["upstreamPath"] == "/*"
    assert (ok_rollup["routeName"], ok_rollup["apiName"]) == ("all", "api")
    assert ok_rollup["minute"] == "2026-09-21T14:13:00+00:00"
    assert ok_rollup["requests"] == 3
    assert ok_rollup["upstreamRequests"] == 3
    assert ok_rollup["requestBytes"] == 15
    assert ok_rollup["requestBytesMin"] == ok_rollup["requestBytesMax"] == 5
    assert ok_rollup["requestSketch"] == f"{sketch_index(5)}=3"
    assert ok_rollup["responseBytes"] > 0
    assert counted(ok_rollup["latencySketch"]) == 3
    assert counted(ok_rollup["upstreamSketch"]) == 3
    transfer = ok_rollup["transferSketch"]
    assert counted(transfer) == 3
    assert ok_rollup["transferBytesMin"] == 5 + ok_rollup["responseBytesMin"]
    assert ok_rollup["latencyMsMin"] <= ok_rollup["latencyMsMax"] <= ok_rollup["latencyMsSum"]
    refused = documents[("GET", 401)]
    assert (refused["consumer"], refused["upstreamRequests"]) == ("", 0)
    assert (refused["appId"], refused["appName"], refused["upstreamSketch"]) == ("", "", "")
    # shipped data is gone from the recorder: nothing is sent twice
    assert recorder.pending == {}
    assert await recorder.ship()
    assert len(sink.batches) == 1


async def test_interleaved_requests_of_one_route_count_in_their_own_rollups(
    traffic: tuple[Gateway, httpx.AsyncClient], backend: int
) -> None:
    """A route remembers the rollup its last request counted in (``RouteKeys``): a request
    that differs from the one before only by its status, its consumer, its method or its
    minute, and a request after a shipment, must each count in the rollup of its own key."""
    gw, client = traffic
    sink = Collector()
    clock = [NOW]
    recorder = TelemetryRecorder(sink, now=lambda: clock[0])
    gw.observers.append(recorder.observe)
    document = with_key_auth(backend)
    limit = plugin("limit-count", 210, count=2, time_window=60, rejected_code=429)
    document["routes"][0]["plugins"].append(limit)
    document["consumers"].append(
        {
            "id": "c2",
            "username": "bob",
            "credentials": {"key-auth": {"key_hash": hashlib.sha256(b"bob-key").hexdigest()}},
            "plugins": [],
        }
    )
    document["content_hash"] = content_hash(document)
    await gw.apply(document)
    alice, bob = {"apikey": "alice-key"}, {"apikey": "bob-key"}
    # each request differs from the one before in one part of its key
    statuses = [
        (await client.get("/a", headers=alice)).status_code,
        (await client.get("/a", headers=alice)).status_code,  # (the same key)
        (await client.get("/a", headers=alice)).status_code,  # the status
        (await client.post("/a", headers=alice)).status_code,  # the method
    ]
    clock[0] = NOW + 60
    statuses.append((await client.post("/a", headers=alice)).status_code)  # the minute
    statuses.append((await client.post("/a", headers=bob)).status_code)  # the consumer
    assert statuses == [200, 200, 429, 429, 429, 429]
    assert await recorder.ship()
    assert (await client.post("/a", headers=bob)).status_code == 429  # after the shipment
    assert await recorder.ship()
    first, second = sink.batches
    minute = int(NOW) // 60 * 60
    assert {(k[1], k[4], k[5], k[6]): r.requests for k, r in first.rollups.items()} == {
        (minute, "alice", "GET", 200): 2,
        (minute, "alice", "GET", 429): 1,
        (minute, "alice", "POST", 429): 1,
        (minute + 60, "alice", "POST", 429): 1,
        (minute + 60, "bob", "POST", 429): 1,
    }
    assert [(k[1], r.requests) for k, r in second.rollups.items()] == [(minute + 60, 1)]


async def test_a_failed_shipment_is_kept_and_merged_with_newer_traffic(
    traffic: tuple[Gateway, httpx.AsyncClient], backend: int
) -> None:
    gw, client = traffic
    sink = Collector()
    recorder = TelemetryRecorder(sink, now=lambda: NOW)
    gw.observers.append(recorder.observe)
    await gw.apply(snapshot(backend, []))
    await client.get("/x")
    sink.failing = True
    assert not await recorder.ship()
    await client.get("/x")
    sink.failing = False
    assert await recorder.ship()
    (document,) = sink.documents()
    assert document["requests"] == 2


async def test_memory_is_bounded_and_losses_are_counted(
    traffic: tuple[Gateway, httpx.AsyncClient], backend: int
) -> None:
    gw, client = traffic
    sink = Collector()
    recorder = TelemetryRecorder(sink, max_keys=2, now=lambda: NOW)
    gw.observers.append(recorder.observe)
    await gw.apply(snapshot(backend, []))
    for method in ("GET", "POST", "PUT", "DELETE", "PATCH"):
        await client.request(method, "/x")
    assert len(recorder.pending) == 2
    assert recorder.dropped == {"env": 3}
    assert await recorder.ship()
    assert sink.batches[0].dropped == {"env": 3}
    assert recorder.dropped == {} and recorder.dropped_total == 3


async def test_a_partial_delivery_is_not_sent_again() -> None:
    delivered: list[int] = []

    async def sink(batch: Batch) -> None:
        first = next(iter(batch.rollups))
        delivered.append(batch.rollups[first].requests)
        del batch.rollups[first]  # delivered one, then the connection broke
        raise ConnectionError("reset")

    recorder = TelemetryRecorder(sink, now=lambda: NOW)
    one, two = Rollup(), Rollup()
    one.add(1.0, -1.0, 0, 10)
    two.add(1.0, 0.5, 0, 10)
    two.add(3.0, 2.5, 0, 10)
    recorder.pending = {
        ("env", 0, "a", "r", "", "GET", 200, "", "", ""): one,
        ("env", 0, "a", "r", "", "GET", 500, "", "", ""): two,
    }
    assert not await recorder.ship()
    assert [r.requests for r in recorder.pending.values()] == [2]
    assert delivered == [1]


@pytest.mark.parametrize(
    "value", [0.001, 0.0123, 1.0, 4.99, 5.0, 87.5, 1000.0, 12_345.6, 3.2e6, 9.9e11]
)
def test_a_sketch_bin_holds_values_within_its_relative_accuracy(value: float) -> None:
    index = sketch_index(value)
    assert 0 < index < SKETCH_MAX_INDEX
    assert abs(sketch_value(index) - value) <= SKETCH_ACCURACY * value * 1.000001
    assert sketch_index(value * 1.05) > index  # neighbouring values are told apart


def test_tiny_values_share_bin_zero_and_huge_ones_the_last() -> None:
    assert sketch_index(0) == sketch_index(0.0009) == 0
    assert sketch_value(0) == 0.0
    assert sketch_index(1e15) == SKETCH_MAX_INDEX


def test_rollups_merge_their_extremes_and_sketches() -> None:
    first, second = Rollup(), Rollup()
    first.add(10.0, -1.0, 0, 100)
    first.add(30.0, 20.0, 7, 50)
    second.add(5.0, 4.0, 3, 500)
    first.merge(second)
    assert (first.requests, first.upstream_requests) == (3, 2)
    assert (first.latency_ms_min, first.latency_ms_max, first.latency_ms_sum) == (5.0, 30.0, 45.0)
    assert (first.upstream_ms_min, first.upstream_ms_max) == (4.0, 20.0)
    assert (first.request_bytes_min, first.request_bytes_max) == (0, 7)
    assert (first.response_bytes_min, first.response_bytes_max) == (50, 500)
    assert (first.transfer_bytes_min, first.transfer_bytes_max) == (57, 503)
    assert sum(first.latency_sketch.values()) == 3
    assert sum(first.upstream_sketch.values()) == 2
    assert first.request_sketch[0] == 1  # a request without a body
