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
from portico.gateway.telemetry import (
    LATENCY_BUCKETS_MS,
    Batch,
    Rollup,
    TelemetryRecorder,
    bucket_of,
)
from tests.gateway import test_pipeline
from tests.gateway.test_pipeline import plugin, running, snapshot

backend = test_pipeline.backend  # the fixture

NOW = 1_790_000_000.0  # a fixed clock: every request falls into one minute


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
    assert ok_rollup["minute"] == "2026-09-21T14:13:00+00:00"
    assert ok_rollup["requests"] == 3
    assert ok_rollup["upstreamRequests"] == 3
    assert ok_rollup["requestBytes"] == 15
    assert ok_rollup["responseBytes"] > 0
    assert sum(ok_rollup["latencyBuckets"]) == 3
    assert ok_rollup["latencyMsMax"] <= ok_rollup["latencyMsSum"]
    refused = documents[("GET", 401)]
    assert (refused["consumer"], refused["upstreamRequests"]) == ("", 0)
    # shipped data is gone from the recorder: nothing is sent twice
    assert recorder.pending == {}
    assert await recorder.ship()
    assert len(sink.batches) == 1


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
    recorder.pending = {
        ("env", 0, "a", "r", "", "GET", 200): Rollup(requests=1, buckets=[1] + [0] * 11),
        ("env", 0, "a", "r", "", "GET", 500): Rollup(requests=2, buckets=[2] + [0] * 11),
    }
    assert not await recorder.ship()
    assert [r.requests for r in recorder.pending.values()] == [2]
    assert delivered == [1]


@pytest.mark.parametrize(
    ("latency", "bucket"),
    [(0.0, 0), (5.0, 0), (5.1, 1), (1000.0, 7), (10_000.0, 10), (10_000.1, 11)],
)
def test_latency_buckets(latency: float, bucket: int) -> None:
    assert bucket_of(latency) == bucket
    assert len(LATENCY_BUCKETS_MS) == 11
