"""limit-req (a local leaky bucket) and limit-count's redis policy at run time, over real sockets:
a Gateway on loopback, a real backend, a real redis-server. Time comes from a controllable
clock (the gateway's ``services.now``); limit-req's delays are observed by a gate standing in
for its sleep, so nothing here asserts on elapsed time."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from portico.gateway.counters.local import LeakyBuckets, LocalCounters
from portico.gateway.counters.redis import RedisCounters, RedisTarget
from portico.gateway.egress import EgressGuard
from portico.gateway.plugins import limit_req
from tests.gateway.test_pipeline import plugin, snapshot
from tests.support.ports import free_port
from tests.support.redisserver import RedisServer
from tests.support.waiting import eventually

LOOPBACK = ("127.0.0.0/8",)


class Gate:
    """Stands in for limit-req's sleep: records each delay and holds the request until opened."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.opened = asyncio.Event()

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await self.opened.wait()


@pytest.fixture
async def redis_client(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_server.url)
    yield client
    await client.aclose()


# ---------------------------------------------------------------------------- limit-req


def test_the_leaky_bucket_follows_nginx() -> None:
    buckets = LeakyBuckets()
    # rate 2/s, burst 2: on time, then one and two requests ahead of schedule, then refused
    assert [buckets.incoming("k", 2, 2, 100.0) for _ in range(3)] == [0.0, 0.5, 1.0]
    assert buckets.incoming("k", 2, 2, 100.0) is None
    assert buckets.incoming("k", 2, 2, 100.0) is None  # a refusal does not fill the bucket
    assert buckets.incoming("k", 2, 2, 100.5) == 1.0  # one leaked, one added
    assert buckets.incoming("other", 2, 2, 100.5) == 0.0  # keys are independent
    assert buckets.incoming("k", 2, 2, 200.0) == 0.0  # long drained
    # a clock that steps back neither refuses forever nor crashes
    assert buckets.incoming("k", 2, 2, 50.0) == 0.5
    assert buckets.incoming("k", 2, 2, 50.5) == 0.5


def test_the_bucket_table_is_bounded() -> None:
    buckets = LeakyBuckets(max_keys=10)
    for i in range(100):
        assert buckets.incoming(f"k{i}", 1, 0, 0.0) == 0.0
        assert len(buckets) <= 10
    # drained buckets go first and mean nothing: a returning key starts afresh
    assert buckets.incoming("k0", 1, 0, 5.0) == 0.0
    assert LocalCounters().buckets is not None


async def test_limit_req_delays_the_burst_and_refuses_beyond_it(
    served: Any, backend: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    gw, client, _ = await served()
    gate = Gate()
    monkeypatch.setattr(limit_req, "sleep", gate)
    await gw.apply(snapshot(backend, [plugin("limit-req", 200, rate=1, burst=2)]))

    assert (await client.get("/first")).status_code == 200  # on schedule: not delayed
    assert gate.delays == []
    held = [asyncio.create_task(client.get(f"/burst/{i}")) for i in range(2)]
    await eventually(lambda: len(gate.delays) == 2)
    assert sorted(gate.delays) == [1.0, 2.0]  # excess / rate
    # beyond the burst: refused at once, while the burst is still held back
    refused = await client.get("/beyond")
    assert refused.status_code == 503
    assert refused.json() == {"message": "Too many requests"}
    assert not any(task.done() for task in held)
    gate.opened.set()
    for response in await asyncio.gather(*held):
        assert response.status_code == 200
        assert response.json()["path"].startswith("/burst/")  # proxied once released


async def test_limit_req_really_waits_then_passes(served: Any, backend: int) -> None:
    gw, client, _ = await served()
    await gw.apply(snapshot(backend, [plugin("limit-req", 200, rate=50, burst=2)]))
    responses = await asyncio.gather(*(client.get("/x") for _ in range(3)))
    assert [r.status_code for r in responses] == [200, 200, 200]
    assert (await client.get("/x")).status_code == 503  # the clock stood still


async def test_limit_req_nodelay_passes_the_burst_at_once(
    served: Any, backend: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    gw, client, clock = await served()
    gate = Gate()
    monkeypatch.setattr(limit_req, "sleep", gate)
    config = {"rate": 1, "burst": 2, "nodelay": True, "rejected_code": 429}
    config["rejected_msg"] = "slow down"
    await gw.apply(snapshot(backend, [plugin("limit-req", 200, **config)]))
    assert [(await client.get("/x")).status_code for _ in range(3)] == [200, 200, 200]
    refused = await client.get("/x")
    assert (refused.status_code, refused.json()) == (429, {"message": "slow down"})
    assert gate.delays == []  # never held
    clock.now += 1  # one request leaks away: one more passes, and only one
    assert (await client.get("/x")).status_code == 200
    assert (await client.get("/x")).status_code == 429


async def test_limit_req_leaks_at_the_rate(served: Any, backend: int) -> None:
    gw, client, clock = await served()
    await gw.apply(snapshot(backend, [plugin("limit-req", 200, rate=4, burst=0)]))
    assert (await client.get("/x")).status_code == 200
    assert (await client.get("/x")).status_code == 503
    clock.now += 0.25  # 1/rate later
    assert (await client.get("/x")).status_code == 200
    assert (await client.get("/x")).status_code == 503
    clock.now += 60
    assert (await client.get("/x")).status_code == 200


async def test_limit_req_keys_are_separate_and_outlive_a_redeploy(
    served: Any, backend: int
) -> None:
    gw, client, _ = await served()
    config = {"rate": 1, "burst": 0, "key_type": "var", "key": "http_x_user"}
    await gw.apply(snapshot(backend, [plugin("limit-req", 200, **config)]))
    alice, bob = {"x-user": "alice"}, {"x-user": "bob"}
    assert (await client.get("/x", headers=alice)).status_code == 200
    assert (await client.get("/x", headers=alice)).status_code == 503
    assert (await client.get("/x", headers=bob)).status_code == 200
    # no such header: the client's address is the key
    assert (await client.get("/x")).status_code == 200
    assert (await client.get("/x")).status_code == 503
    # the same configuration in a new snapshot keeps its buckets
    await gw.apply(snapshot(backend, [plugin("limit-req", 200, **config)], version=2))
    assert (await client.get("/x", headers=alice)).status_code == 503
    # a constant key: everyone shares one bucket
    constant = {"rate": 1, "burst": 0, "key_type": "constant", "key": "all"}
    await gw.apply(snapshot(backend, [plugin("limit-req", 200, **constant)], version=3))
    assert (await client.get("/x", headers={"x-user": "carol"})).status_code == 200
    assert (await client.get("/x", headers={"x-user": "dave"})).status_code == 503


async def test_a_combination_with_no_value_falls_back_to_the_client_address(
    served: Any, backend: int
) -> None:
    gw, client, _ = await served()
    config = {"rate": 1, "burst": 0, "key_type": "var_combination", "key": "$http_a $http_b"}
    await gw.apply(snapshot(backend, [plugin("limit-req", 200, **config)]))
    assert (await client.get("/x", headers={"a": "1"})).status_code == 200
    assert (await client.get("/x", headers={"a": "1"})).status_code == 503
    assert (await client.get("/x", headers={"b": "1"})).status_code == 200  # " 1" ≠ "1 "
    assert (await client.get("/x")).status_code == 200  # remote_addr, not " "
    assert (await client.get("/x")).status_code == 503


# ---------------------------------------------------------------------------- limit-count on redis


def redis_limit(url: str, **config: Any) -> dict[str, Any]:
    base = {"count": 10, "time_window": 60, "key_type": "constant", "key": "all"}
    return plugin("limit-count", 210, **{**base, "policy": "redis", "redis_url": url, **config})


async def test_redis_admits_exactly_count_under_concurrency(
    served: Any, backend: int, redis_server: RedisServer, redis_client: aioredis.Redis
) -> None:
    gw, client, _ = await served(LOOPBACK)
    await gw.apply(snapshot(backend, [redis_limit(redis_server.url, rejected_code=429)]))
    responses = await asyncio.gather(*(client.get(f"/x/{i}") for i in range(30)))
    admitted = [r for r in responses if r.status_code == 200]
    refused = [r for r in responses if r.status_code != 200]
    assert len(admitted) == 10
    assert {r.status_code for r in refused} == {429}
    assert refused[0].json() == {"message": "Too many requests"}
    # every admitted request saw its own count: the INCR is atomic
    assert sorted(int(r.headers["x-ratelimit-remaining"]) for r in admitted) == list(range(10))
    assert {r.headers["x-ratelimit-limit"] for r in responses} == {"10"}
    assert {r.headers["x-ratelimit-remaining"] for r in refused} == {"0"}
    assert all(0 < int(r.headers["x-ratelimit-reset"]) <= 60 for r in responses)
    keys = await redis_client.keys("*")
    assert len(keys) == 1 and keys[0].startswith(b"portico:lc:")
    assert 0 < await redis_client.pttl(keys[0]) <= 60_000


async def test_redis_window_ends_with_its_ttl_and_the_script_is_reloaded(
    served: Any, backend: int, redis_server: RedisServer, redis_client: aioredis.Redis
) -> None:
    # The window is Redis's: its key's TTL, on Redis's clock. A one-second window made the
    # three requests below race it; the window's end is brought about instead (PEXPIRE).
    gw, client, _ = await served(LOOPBACK)
    await gw.apply(snapshot(backend, [redis_limit(redis_server.url, count=2, time_window=60)]))
    assert [(await client.get("/x")).status_code for _ in range(3)] == [200, 200, 503]
    [key] = await redis_client.keys("portico:lc:*")
    assert 0 < await redis_client.pttl(key) <= 60_000

    async def expired() -> bool:
        return not await redis_client.exists(key)

    await redis_client.pexpire(key, 1)
    await eventually(expired)
    after = await client.get("/x")  # the key expired: a new window
    assert (after.status_code, after.headers["x-ratelimit-remaining"]) == (200, "1")
    # a Redis that lost the script (restart, SCRIPT FLUSH) gets it again: NOSCRIPT → EVAL
    await redis_client.script_flush()
    await redis_client.flushall()
    again = await client.get("/x")
    assert (again.status_code, again.headers["x-ratelimit-remaining"]) == (200, "1")
    stats = await redis_client.info("commandstats")
    # EVAL twice: for the first request ever, and the first after the flush; EVALSHA otherwise
    assert stats["cmdstat_eval"]["calls"] == 2
    assert stats["cmdstat_evalsha"]["calls"] >= 4


@pytest.mark.parametrize("degrade", [True, False])
async def test_a_stopped_redis_degrades_or_fails(
    served: Any,
    backend: int,
    redis_server: RedisServer,
    degrade: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    gw, client, _ = await served(LOOPBACK)
    await gw.apply(snapshot(backend, [redis_limit(redis_server.url, allow_degradation=degrade)]))
    counted = await client.get("/x")
    assert (counted.status_code, counted.headers["x-ratelimit-remaining"]) == (200, "9")
    redis_server.stop()
    caplog.set_level(logging.WARNING, logger="portico.gateway.redis")
    for _ in range(3):
        response = await client.get("/x")
        if degrade:
            assert response.status_code == 200
            assert "x-ratelimit-limit" not in response.headers
        else:
            assert response.status_code == 500
            assert response.json() == {"message": "failed to limit count"}
    warnings = [r for r in caplog.records if r.name == "portico.gateway.redis"]
    assert len(warnings) == 1  # once per interval, not once per request


async def test_a_refusing_redis_fails_the_request_and_logs_no_password(
    served: Any,
    backend: int,
    redis_server: RedisServer,
    redis_client: aioredis.Redis,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await redis_client.config_set("requirepass", "the-right-one")
    gw, client, _ = await served(LOOPBACK)
    url = redis_server.url.replace("redis://", "redis://:hunter2-secret@")
    await gw.apply(snapshot(backend, [redis_limit(url)]))
    caplog.set_level(logging.WARNING, logger="portico.gateway.redis")
    response = await client.get("/x")  # a live Redis refuses the password
    assert (response.status_code, response.json()) == (500, {"message": "failed to limit count"})
    assert caplog.records
    assert all("hunter2" not in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("degrade", [True, False])
async def test_a_loopback_redis_is_refused_without_the_operators_allowance(
    served: Any,
    backend: int,
    redis_server: RedisServer,
    redis_client: aioredis.Redis,
    degrade: bool,
) -> None:
    gw, client, _ = await served()  # no egress allowance: loopback is internal
    await gw.apply(snapshot(backend, [redis_limit(redis_server.url, allow_degradation=degrade)]))
    response = await client.get("/x")
    if degrade:
        assert response.status_code == 200
        assert "x-ratelimit-limit" not in response.headers
    else:
        assert (response.status_code, response.json()) == (
            500,
            {"message": "failed to limit count"},
        )
    assert await redis_client.dbsize() == 0  # the gateway never reached it


async def test_an_unreachable_redis_port_fails_fast_and_closed(served: Any, backend: int) -> None:
    gw, client, _ = await served(LOOPBACK)
    await gw.apply(snapshot(backend, [redis_limit(f"redis://127.0.0.1:{free_port()}/0")]))
    responses = await asyncio.gather(*(client.get("/x") for _ in range(5)))
    assert {r.status_code for r in responses} == {500}


async def test_a_tls_redis_is_reached_at_the_checked_address_under_its_own_name() -> None:
    url = "rediss://user:p%40ss@cache.example.com:6380/2"
    assert RedisTarget.parse(url) == RedisTarget(
        "rediss", "cache.example.com", 6380, 2, "user", "p@ss"
    )
    assert RedisTarget.parse(url).label == "rediss://cache.example.com:6380/2"  # no password
    counters = RedisCounters(url, EgressGuard())
    client = counters._open("203.0.113.7")
    try:
        connection = client.connection_pool.make_connection()
        arguments = connection._connection_arguments()
        assert (arguments["host"], arguments["port"]) == ("203.0.113.7", 6380)
        assert arguments["server_hostname"] == "cache.example.com"  # SNI and certificate check
        assert arguments["ssl"].check_hostname
    finally:
        await client.aclose()
