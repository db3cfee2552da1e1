"""Traffic through the embedded gateway of a real `portico serve`, to a real backend.

The issue's "done when": an API whose service requires key-auth in a custom header and whose
route has a limit-count and a prefix-stripping proxy-rewrite; through the environment's
gateway hostname: no key 401, unknown key 401, valid key 200 with the prefix stripped at the
backend, the count exhausted → the configured rejected code; undeploy → 404 within a second.
Plus the seed's five conditions: each one missing blocks traffic.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from portico.core.db.engine import Database
from portico.management.telemetry.models import TelemetryRollup
from tests.support.portico_process import bootstrapped_serve, wait_for

pytestmark = pytest.mark.e2e

#: how long `portico serve` may take to answer /healthz: generous, the suite runs in parallel
HOST = "api.shop.example.com"


class Echo(BaseHTTPRequestHandler):
    """Answers with what it received, so tests can see what the gateway forwarded."""

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        payload = json.dumps(
            {
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode(errors="replace"),
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = _answer  # noqa: N815

    def log_message(self, *args: object) -> None:
        return


@contextmanager
def echo_backend() -> Iterator[int]:
    """An ``Echo`` server on a loopback port (its number) while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def backend() -> Iterator[int]:
    with echo_backend() as port:
        yield port


@pytest.fixture
def portico(database_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    with bootstrapped_serve(database_url, tmp_path, PORTICO_TELEMETRY_INTERVAL_SECONDS="0.3") as (
        env,
        process,
    ):
        yield {
            "control": f"http://{env['PORTICO_LISTEN']}",
            "gateway": f"http://{env['PORTICO_GATEWAY_LISTEN']}",
            "status": f"http://{env['PORTICO_METRICS_LISTEN']}",
            "log": str(tmp_path / "serve.log"),
            "pid": str(process.pid),
            "database_url": database_url,
        }


def test_key_auth_limit_count_and_prefix_stripping_through_the_gateway(
    portico: dict[str, str], backend: int
) -> None:
    cp = httpx.Client(base_url=portico["control"], timeout=10)
    token = cp.post(
        "/api/auth/login", json={"email": "owner@example.com", "password": "owner-password-123"}
    ).json()["token"]
    cp.headers["Authorization"] = f"Bearer {token}"
    org = cp.get("/api/me").json()["orgs"][0]["id"]
    env = cp.post(f"/api/orgs/{org}/envs", json={"name": "shop", "gatewayHosts": [HOST]}).json()
    upstream = cp.post(
        f"/api/orgs/{org}/envs/{env['id']}/upstreams",
        json={"name": "echo", "specification": {"nodes": [{"host": "127.0.0.1", "port": backend}]}},
    ).json()
    consumer = cp.post(
        f"/api/orgs/{org}/consumers",
        json={"username": "alice", "plugins": {"key-auth": {"key": "alice-secret-key-1"}}},
    )
    assert consumer.status_code == 201, consumer.text
    api = cp.post(f"/api/orgs/{org}/apis", json={"name": "orders"}).json()
    revision = cp.post(
        f"/api/orgs/{org}/apis/{api['id']}/revisions",
        json={
            "serviceSpec": {"plugins": {"key-auth": {"header": "x-shop-key"}}},
            "routeSpec": [
                {
                    "name": "orders",
                    "uri": "/shop/orders/*",
                    "methods": ["GET"],
                    "plugins": {
                        # a year's window (the longest): the node's clock is its own, and
                        # a minute's fixed window ended between two of the four requests
                        # below about once in a hundred runs
                        "limit-count": {
                            "count": 3,
                            "time_window": 31_536_000,
                            "rejected_code": 429,
                        },
                        "proxy-rewrite": {"regex_uri": ["^/shop/(.*)", "/$1"]},
                    },
                }
            ],
            "environmentUpstreams": [{"environmentId": env["id"], "upstreamId": upstream["id"]}],
        },
    ).json()
    gw = httpx.Client(base_url=portico["gateway"], headers={"Host": HOST}, timeout=10)

    # not deployed yet: the environment has no route
    wait_for(lambda: httpx.get(portico["status"] + "/ready").status_code == 200)
    assert gw.get("/shop/orders/1").status_code == 404

    deploy = cp.post(
        f"/api/orgs/{org}/apis/{api['id']}/revisions/{revision['id']}/deploy",
        json={"environmentId": env["id"]},
    )
    assert deploy.status_code == 200, deploy.text
    wait_for(lambda: gw.get("/shop/orders/1").status_code != 404, timeout=5)

    missing = gw.get("/shop/orders/1")
    assert missing.status_code == 401
    assert missing.json() == {"message": "Missing API key in request"}
    unknown = gw.get("/shop/orders/1", headers={"x-shop-key": "nope"})
    assert unknown.status_code == 401
    assert unknown.json() == {"message": "Invalid API key in request"}

    ok = gw.get("/shop/orders/1?x=1", headers={"x-shop-key": "alice-secret-key-1"})
    assert ok.status_code == 200, ok.text
    echoed = ok.json()
    assert echoed["path"] == "/orders/1?x=1"  # the prefix stripped, the query kept
    assert echoed["headers"]["x-forwarded-for"] == "127.0.0.1"
    assert echoed["headers"]["host"] == HOST
    assert ok.headers["x-ratelimit-limit"] == "3"
    assert ok.headers["x-request-id"]

    # the wrong host, the wrong method, another path: never proxied
    assert gw.get("/shop/orders/1", headers={"Host": "portal.example.com"}).status_code == 404
    assert (
        gw.post("/shop/orders/1", headers={"x-shop-key": "alice-secret-key-1"}).status_code == 404
    )
    assert gw.get("/elsewhere", headers={"x-shop-key": "alice-secret-key-1"}).status_code == 404
    # a path spelled to dodge the prefix is normalised first
    dodged = gw.get("/shop/x/../orders/2", headers={"x-shop-key": "alice-secret-key-1"})
    assert dodged.status_code == 200
    assert dodged.json()["path"] == "/orders/2"

    third = gw.get("/shop/orders/3", headers={"x-shop-key": "alice-secret-key-1"})
    assert third.status_code == 200
    exhausted = gw.get("/shop/orders/4", headers={"x-shop-key": "alice-secret-key-1"})
    assert exhausted.status_code == 429

    undeploy = cp.post(
        f"/api/orgs/{org}/apis/{api['id']}/revisions/{revision['id']}/undeploy",
        json={"environmentId": env["id"]},
    )
    assert undeploy.status_code == 200
    wait_for(lambda: gw.get("/shop/orders/5").status_code == 404, timeout=5)

    # every routed request reached the control plane's per-minute rollups
    def rolled_up() -> dict[tuple[int, str], int]:
        return asyncio.run(rollups(portico["database_url"], env["id"]))

    def arrived() -> bool:
        totals = rolled_up()
        # 401s: the two above, plus the probes of the wait_for loops around (un)deploy
        return (
            totals.get((200, "alice")) == 3
            and totals.get((429, "alice")) == 1
            and totals.get((401, ""), 0) >= 3
            and set(totals) == {(200, "alice"), (429, "alice"), (401, "")}
        )

    wait_for(arrived, timeout=10)

    # the same traffic through the analytics query, names and percentiles included
    now = datetime.now(UTC)
    query = {
        "startTime": (now - timedelta(hours=1)).isoformat(),
        "endTime": (now + timedelta(minutes=2)).isoformat(),
        "dimensions": ["response_status_code", "consumer", "app_name"],
        "excludeTimeUnit": True,
    }
    counted = cp.post(f"/api/orgs/{org}/analytics/metrics/requests-count", json=query)
    assert counted.status_code == 200, counted.text
    by_key = {
        (
            row["dimensions"]["response_status_code"],
            row["dimensions"]["consumer"],
            row["dimensions"]["app_name"],
        ): row["value"]
        for row in counted.json()["groupedResults"]
    }
    assert by_key[(200, "alice", "")] == 3 and by_key[(429, "alice", "")] == 1
    assert by_key[(401, "", "")] >= 3  # unauthenticated: the unattributed bucket
    paths = cp.post(
        f"/api/orgs/{org}/analytics/metrics/response-time",
        json={
            **query,
            "dimensions": ["api_name", "route_name", "api_path", "upstream_path"],
            "aggregation": "P99",
            "filters": [{"column": "response_status_code", "operator": "EQ", "value": [200]}],
        },
    )
    assert paths.status_code == 200, paths.text
    (row,) = paths.json()["groupedResults"]
    assert row["dimensions"] == {
        "api_name": "orders",
        "route_name": "orders",
        "api_path": "/shop/orders/*",
        "upstream_path": "/$1",
    }
    assert row["value"] > 0


async def rollups(database_url: str, env_id: str) -> dict[tuple[int, str], int]:
    """Requests per (status, consumer) the store holds for the environment."""
    database = Database(database_url)
    try:
        async with database.session() as session:
            rows = await session.execute(
                select(
                    TelemetryRollup.status, TelemetryRollup.consumer, TelemetryRollup.requests
                ).where(TelemetryRollup.environment_id == uuid.UUID(env_id))
            )
            totals: dict[tuple[int, str], int] = {}
            for status, consumer, requests in rows:
                totals[(status, consumer)] = totals.get((status, consumer), 0) + requests
            return totals
    finally:
        await database.dispose()
