"""Known traffic for the analytics tests, fed through the real ingest path: requests are
folded into rollups by the gateway's own ``Rollup``/``Batch`` and posted to
``/api/dataplane/v1/telemetry`` with a data-plane token."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from portico.gateway.telemetry.rollups import Batch, Rollup, RollupKey
from tests.management.conftest import World

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
GOLD = "8a9f0e64-54a7-4f38-9d1b-7a0c1d6a0001"


@dataclass(frozen=True)
class Request:
    at: datetime
    api_id: str
    api_name: str
    route_id: str
    route_name: str
    uri: str
    upstream_path: str
    method: str
    status: int
    latency_ms: float
    upstream_ms: float | None
    request_bytes: int
    response_bytes: int
    consumer: str = ""
    app_id: str = ""
    app_name: str = ""
    developer_id: str = ""
    developer_email: str = ""
    product_id: str = ""
    product_name: str = ""

    def dimension(self, name: str, env_name: str) -> Any:
        return {
            "env_name": env_name,
            "app_id": self.app_id,
            "app_name": self.app_name,
            "product_name": self.product_name,
            "api_name": self.api_name,
            "route_id": self.route_id,
            "route_name": self.route_name,
            "api_path": self.uri,
            "request_method": self.method,
            "response_status_code": self.status,
            "upstream_path": self.upstream_path,
            "developer": self.developer_email,
            "consumer": self.consumer,
        }[name]


def orders_list(at: datetime, latency: float) -> Request:
    return Request(
        at=at,
        api_id="api-orders",
        api_name="orders",
        route_id="rev-o:0",
        route_name="list orders",
        uri="/orders",
        upstream_path="/v1/orders",
        method="GET",
        status=200,
        latency_ms=latency,
        upstream_ms=latency - 0.5,
        request_bytes=0,
        response_bytes=1000 + int(latency),
        consumer="mobile-consumer",
        app_id="app-mobile",
        app_name="Mobile",
        developer_id="dev-1",
        developer_email="ada@example.com",
        product_id=GOLD,
        product_name="Gold",
    )


def orders_create(at: datetime) -> Request:
    return Request(
        at=at,
        api_id="api-orders",
        api_name="orders",
        route_id="rev-o:1",
        route_name="create order",
        uri="/orders",
        upstream_path="/v1/orders/new",
        method="POST",
        status=201,
        latency_ms=200.0,
        upstream_ms=190.0,
        request_bytes=500,
        response_bytes=50,
        consumer="web-consumer",
        app_id="app-web",
        app_name="Web",
        developer_id="dev-2",
        developer_email="bob@example.com",
    )


def users_refused(at: datetime) -> Request:
    """Unauthenticated: no consumer, no app, no product; not proxied."""
    return Request(
        at=at,
        api_id="api-users",
        api_name="users",
        route_id="rev-u:0",
        route_name="get user",
        uri="/users/{id}",
        upstream_path="/users/{id}",
        method="GET",
        status=401,
        latency_ms=2.0,
        upstream_ms=None,
        request_bytes=0,
        response_bytes=20,
    )


def standard() -> list[Request]:
    """110 requests to orders in the first hour, 5 refused ones to users in the second."""
    requests = [orders_list(T0 + timedelta(minutes=1), float(ms)) for ms in range(1, 101)]
    requests += [orders_create(T0 + timedelta(minutes=2, seconds=30)) for _ in range(10)]
    requests += [users_refused(T0 + timedelta(minutes=61)) for _ in range(5)]
    return requests


def batch(env_id: str, requests: Iterable[Request]) -> dict[str, Any]:
    rollups: dict[RollupKey, Rollup] = {}
    for r in requests:
        minute = int(r.at.timestamp()) // 60 * 60
        key = (
            env_id,
            minute,
            r.api_id,
            r.route_id,
            r.consumer,
            r.method,
            r.status,
            r.app_id,
            r.product_id,
            r.developer_id,
        )
        rollup = rollups.get(key)
        if rollup is None:
            labels = (
                r.api_name,
                r.route_name,
                r.uri,
                r.upstream_path,
                r.app_name,
                r.developer_email,
                r.product_name,
            )
            rollup = rollups[key] = Rollup(labels)
        upstream = r.upstream_ms if r.upstream_ms is not None else -1.0
        rollup.add(r.latency_ms, upstream, r.request_bytes, r.response_bytes)
    return {
        "nodeId": "node-1",
        "environmentId": env_id,
        "rollups": Batch(rollups, {}).documents(env_id),
    }


async def node_token(world: World) -> str:
    created = await world.call("POST", f"/envs/{world.env_id}/dataplane-tokens", {"name": "n"})
    assert created.status_code == 201, created.text
    return str(created.json()["token"])


async def send(world: World, requests: Iterable[Request], token: str | None = None) -> None:
    token = token or await node_token(world)
    response = await world.client.post(
        "/api/dataplane/v1/telemetry",
        json=batch(world.env_id, requests),
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 204, response.text


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


async def metric(world: World, name: str, **body: Any) -> Any:
    body.setdefault("startTime", iso(T0))
    body.setdefault("endTime", iso(T0 + timedelta(hours=2)))
    body.setdefault("excludeTimeUnit", True)
    return await world.call("POST", f"/analytics/metrics/{name}", body)


def exact_percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]
