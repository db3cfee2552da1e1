"""product-quota at run time, over real sockets: a Gateway on loopback in front of a real
backend, key-auth before it, products and apps as an environment snapshot carries them, time
from a controllable clock (fixed calendar windows are tested by moving it), and a real
redis-server for the shared counters (two gateways on one Redis, Redis down)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from portico.gateway.plugins.product_quota.runtime import month_window, quota_window
from portico.gateway.plugins.registry import PluginCheckError, check_plugin
from tests.gateway.plugins.conftest import Served
from tests.gateway.plugins.test_observability_runtime import Collector, http_logger
from tests.gateway.plugins.test_observability_runtime import (
    collector as collector,  # (a fixture)
)
from tests.gateway.test_pipeline import plugin, snapshot
from tests.support.ports import free_port
from tests.support.redisserver import RedisServer
from tests.support.waiting import eventually

START = datetime(2026, 3, 10, 12, 0, 0, tzinfo=UTC).timestamp()  # the top of a minute
KEY_AUTH = plugin("key-auth", 100)


def quota(limit: int, interval: int = 1, unit: str = "minute", scope: str = "app") -> dict:
    return {"limit": limit, "interval": interval, "interval_unit": unit, "key_scope": scope}


def product(pid: str, apis: list[str], q: dict[str, Any] | None) -> dict[str, Any]:
    return {"id": pid, "name": f"product-{pid}", "api_ids": apis, "quota": q}


def app_consumer(
    name: str, products: list[str], developer: str = "dev-1", retiring: list | None = None
) -> dict[str, Any]:
    return {
        "id": f"c-{name}",
        "username": f"app-{name}",
        "credentials": {"key-auth": {"key_hash": hashlib.sha256(name.encode()).hexdigest()}},
        "retiring": retiring or [],
        "app": {
            "id": f"a-{name}",
            "name": name,
            "developer_id": developer,
            "developer_email": f"{developer}@example.com",
            "product_ids": products,
        },
    }


def world(
    backend: int,
    consumers: list[dict[str, Any]],
    products: list[dict[str, Any]],
    policy: str = "fail_close",
    version: int = 1,
) -> dict[str, Any]:
    document = snapshot(
        backend, [KEY_AUTH, plugin("product-quota", 230, error_policy=policy)], version=version
    )
    document["consumers"] = consumers
    document["products"] = products
    return document


async def at_start(served: Any, redis_url: str = "") -> Served:
    """A gateway (counting in the Redis at ``redis_url``, if any) whose clock stands at START."""
    gw, client, clock = await served(quota_redis_url=redis_url)
    clock.now = START
    return gw, client, clock


async def calls(client: httpx.AsyncClient, key: str, n: int) -> list[httpx.Response]:
    return [await client.get("/x", headers={"apikey": key}) for _ in range(n)]


async def test_the_sixth_call_of_a_five_per_minute_app_is_refused_exactly(
    served: Any, backend: int
) -> None:
    gw, client, _ = await at_start(served)
    await gw.apply(
        world(
            backend,
            [app_consumer("small", ["p5"]), app_consumer("big", ["p1000"])],
            [product("p5", ["api"], quota(5)), product("p1000", ["api"], quota(1000))],
        )
    )
    answers = await calls(client, "small", 6)
    assert [a.status_code for a in answers] == [200] * 5 + [429]
    refused = answers[5]
    assert refused.content == b'{"error":"quota exceeded"}'
    assert refused.headers["content-type"] == "application/json"
    assert "retry-after" not in refused.headers
    assert not [h for h in refused.headers if h.lower().startswith("x-ratelimit")]
    assert not [h for h in answers[0].headers if h.lower().startswith("x-ratelimit")]
    # the other app has its own bucket and keeps going
    assert [a.status_code for a in await calls(client, "big", 10)] == [200] * 10


async def test_authentication_comes_first_and_consumes_nothing(served: Any, backend: int) -> None:
    gw, client, _ = await at_start(served)
    await gw.apply(world(backend, [app_consumer("a", ["p"])], [product("p", ["api"], quota(2))]))
    missing = await client.get("/x")
    unknown = await client.get("/x", headers={"apikey": "nobody"})
    assert (missing.status_code, unknown.status_code) == (401, 401)
    assert missing.json() == {"message": "Missing API key in request"}
    assert [a.status_code for a in await calls(client, "a", 3)] == [200, 200, 429]


async def test_refusals_without_a_covering_product(served: Any, backend: int) -> None:
    plain = {
        "id": "c-plain",
        "username": "plain",
        "credentials": {"key-auth": {"key_hash": hashlib.sha256(b"plain").hexdigest()}},
    }
    gw, client, _ = await at_start(served)
    await gw.apply(
        world(
            backend,
            [
                plain,
                app_consumer("other-api", ["p-other"]),
                app_consumer("undeployed", ["p-not-here"]),
                app_consumer("no-quota", ["p-none"]),
                app_consumer("nothing", []),
            ],
            [product("p-other", ["another-api"], quota(5)), product("p-none", ["api"], None)],
        )
    )
    no_product = b'{"error":"no product covers this API"}'
    for key in ("plain", "other-api", "undeployed", "nothing"):
        answer = await client.get("/x", headers={"apikey": key})
        assert (answer.status_code, answer.content) == (403, no_product), key
    answer = await client.get("/x", headers={"apikey": "no-quota"})
    assert answer.status_code == 403
    assert answer.content == b'{"error":"product missing quota configuration"}'


async def test_the_lowest_ranked_covering_product_meters(served: Any, backend: int) -> None:
    gw, client, _ = await at_start(served)
    # ranked first, but covers another API; then a 2/min product; then a 100/min one
    await gw.apply(
        world(
            backend,
            [app_consumer("a", ["p-elsewhere", "p2", "p100"])],
            [
                product("p-elsewhere", ["other"], quota(1)),
                product("p2", ["api"], quota(2)),
                product("p100", ["api"], quota(100)),
            ],
        )
    )
    assert [a.status_code for a in await calls(client, "a", 3)] == [200, 200, 429]


async def test_unlimited_admits_and_developer_scope_shares_one_bucket(
    served: Any, backend: int
) -> None:
    gw, client, _ = await at_start(served)
    await gw.apply(
        world(
            backend,
            [
                app_consumer("u", ["unlimited"], developer="d0"),
                app_consumer("one", ["shared"], developer="d1"),
                app_consumer("two", ["shared"], developer="d1"),
                app_consumer("three", ["shared"], developer="d2"),
            ],
            [
                product("unlimited", ["api"], quota(-1)),
                product("shared", ["api"], quota(3, scope="developer")),
            ],
        )
    )
    assert {a.status_code for a in await calls(client, "u", 20)} == {200}
    answers = await calls(client, "one", 2) + await calls(client, "two", 2)
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    # another developer's apps have a bucket of their own
    assert [a.status_code for a in await calls(client, "three", 3)] == [200, 200, 200]


async def test_windows_are_fixed_calendar_windows(served: Any, backend: int) -> None:
    gw, client, clock = await at_start(served)
    await gw.apply(world(backend, [app_consumer("a", ["p"])], [product("p", ["api"], quota(2))]))
    clock.now = START + 58.5
    assert [a.status_code for a in await calls(client, "a", 3)] == [200, 200, 429]
    clock.now = START + 60.0  # the top of the next minute: a fresh window, not a sliding one
    assert [a.status_code for a in await calls(client, "a", 3)] == [200, 200, 429]


def test_calendar_window_bounds() -> None:
    at = datetime(2026, 2, 17, 13, 45, 12, tzinfo=UTC).timestamp()

    def iso(bounds: tuple[int, int]) -> tuple[str, str]:
        return tuple(datetime.fromtimestamp(b, UTC).isoformat()[:19] for b in bounds)  # type: ignore[return-value]

    assert iso(quota_window(at, 1, "second")) == ("2026-02-17T13:45:12", "2026-02-17T13:45:13")
    assert iso(quota_window(at, 1, "minute")) == ("2026-02-17T13:45:00", "2026-02-17T13:46:00")
    assert iso(quota_window(at, 15, "minute")) == ("2026-02-17T13:45:00", "2026-02-17T14:00:00")
    assert iso(quota_window(at, 1, "hour")) == ("2026-02-17T13:00:00", "2026-02-17T14:00:00")
    assert iso(quota_window(at, 1, "day")) == ("2026-02-17T00:00:00", "2026-02-18T00:00:00")
    assert iso(quota_window(at, 1, "month")) == ("2026-02-01T00:00:00", "2026-03-01T00:00:00")
    assert iso(month_window(at, 3)) == ("2026-01-01T00:00:00", "2026-04-01T00:00:00")
    december = datetime(2026, 12, 31, 23, 59, tzinfo=UTC).timestamp()
    assert iso(quota_window(december, 1, "month")) == ("2026-12-01T00:00:00", "2027-01-01T00:00:00")


async def test_monthly_quota_resets_on_the_first(served: Any, backend: int) -> None:
    gw, client, clock = await at_start(served)
    await gw.apply(
        world(backend, [app_consumer("a", ["p"])], [product("p", ["api"], quota(1, unit="month"))])
    )
    clock.now = datetime(2026, 3, 31, 23, 59, 59, tzinfo=UTC).timestamp()
    assert [a.status_code for a in await calls(client, "a", 2)] == [200, 429]
    clock.now = datetime(2026, 4, 1, tzinfo=UTC).timestamp()
    assert [a.status_code for a in await calls(client, "a", 2)] == [200, 429]


async def test_a_rotated_out_key_works_until_its_grace_ends(served: Any, backend: int) -> None:
    old = {
        "plugin": "key-auth",
        "credential": {"key_hash": hashlib.sha256(b"old").hexdigest()},
        "expires_at": START + 30,
    }
    gw, client, clock = await at_start(served)
    await gw.apply(
        world(
            backend,
            [app_consumer("new", ["p"], retiring=[old])],
            [product("p", ["api"], quota(100))],
        )
    )
    assert (await client.get("/x", headers={"apikey": "old"})).status_code == 200
    assert (await client.get("/x", headers={"apikey": "new"})).status_code == 200
    clock.now = START + 30
    assert (await client.get("/x", headers={"apikey": "old"})).status_code == 401
    assert (await client.get("/x", headers={"apikey": "new"})).status_code == 200


async def test_two_nodes_on_one_redis_admit_exactly_the_limit(
    served: Any, backend: int, redis_server: RedisServer
) -> None:
    document = world(backend, [app_consumer("a", ["p"])], [product("p", ["api"], quota(7))])
    nodes = [await at_start(served, redis_server.url), await at_start(served, redis_server.url)]
    for gw, _, _ in nodes:
        await gw.apply(document)
    statuses = []
    for round_ in range(6):  # alternate between the nodes
        _, client, _ = nodes[round_ % 2]
        statuses += [a.status_code for a in await calls(client, "a", 2)]
    assert statuses.count(200) == 7 and statuses.count(429) == 5
    assert statuses[:7] == [200] * 7


async def test_redis_down_fails_closed_or_open_as_configured(served: Any, backend: int) -> None:
    down = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    products = [product("p", ["api"], quota(1))]
    gw, client, _ = await at_start(served, down)
    await gw.apply(world(backend, [app_consumer("a", ["p"])], products))
    answer = await client.get("/x", headers={"apikey": "a"})
    assert answer.status_code == 503
    assert answer.content == b'{"error":"quota service unavailable"}'
    await gw.apply(world(backend, [app_consumer("a", ["p"])], products, policy="fail_open"))
    assert [a.status_code for a in await calls(client, "a", 3)] == [200, 200, 200]


async def test_ctx_namespace_exposes_the_chosen_product_and_app_to_later_plugins_and_logs(
    served: Any, backend: int, collector: Collector
) -> None:
    gw, client, clock = await served(egress_allow=("127.0.0.0/8",))
    clock.now = START
    document = world(backend, [app_consumer("a", ["p"])], [product("p", ["api"], quota(2))])
    chain = document["routes"][0]["plugins"]
    chain[1]["config"]["ctx_namespace"] = "helix"
    rewrite = {"set": {"x-product": "$helix_product_name/$helix_app_name"}}
    chain += [plugin("response-rewrite", 500, headers=rewrite), http_logger(collector.url())]
    await gw.apply(document)
    answers = await calls(client, "a", 3)
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert [a.headers.get("x-product") for a in answers] == ["product-p/a"] * 3
    await eventually(lambda: len(collector.entries()) == 3, what="3 entries sent")
    expected = {
        "product": {"id": "p", "name": "product-p"},
        "app": {"id": "a-a", "name": "a", "developer_id": "dev-1"},
    }
    assert [entry["helix"] for entry in collector.entries()] == [expected] * 3
    # an app that no product covers is named under no namespace
    await gw.apply(world(backend, [app_consumer("b", [])], [], version=2))
    refused = await client.get("/x", headers={"apikey": "b"})
    assert refused.status_code == 403
    assert "x-product" not in refused.headers


def test_ctx_namespace_must_not_hide_an_entry_key() -> None:
    assert check_plugin("product-quota", {"ctx_namespace": "helix_ns"})[1]
    for bad, reason in (
        ("request", "ctx_namespace 'request' is a key of log entries; choose another"),
        ("9lives", "$.ctx_namespace: does not match the pattern"),
    ):
        with pytest.raises(PluginCheckError) as refused:
            check_plugin("product-quota", {"ctx_namespace": bad})
        assert refused.value.reason.startswith(reason)
