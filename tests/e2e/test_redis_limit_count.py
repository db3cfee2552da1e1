"""limit-count's redis policy across processes: two `portico gateway` nodes following one
control plane share a real Redis, and together admit exactly `count` requests per window."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_gateway import backend, portico, wait_for  # noqa: F401 - fixtures
from tests.support.portico_process import PORTICO
from tests.support.ports import free_port
from tests.support.redisserver import RedisServer

pytestmark = pytest.mark.e2e
HOST = "shared.example.com"
COUNT = 20


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


def test_two_gateway_processes_admit_exactly_count_together(
    portico: dict[str, str],  # noqa: F811
    backend: int,  # noqa: F811
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    cp = httpx.Client(base_url=portico["control"], timeout=10)
    token = cp.post(
        "/api/auth/login", json={"email": "owner@example.com", "password": "owner-password-123"}
    ).json()["token"]
    cp.headers["Authorization"] = f"Bearer {token}"
    org = cp.get("/api/me").json()["orgs"][0]["id"]
    env = cp.post(f"/api/orgs/{org}/envs", json={"name": "shared", "gatewayHosts": [HOST]}).json()
    upstream = cp.post(
        f"/api/orgs/{org}/envs/{env['id']}/upstreams",
        json={"name": "echo", "specification": {"nodes": [{"host": "127.0.0.1", "port": backend}]}},
    ).json()
    api = cp.post(f"/api/orgs/{org}/apis", json={"name": "shared-api"}).json()
    limit = {
        "count": COUNT,
        "time_window": 60,
        "key_type": "constant",
        "key": "everyone",
        "policy": "redis",
        "redis_url": redis_server.url,
        "rejected_code": 429,
    }
    revision = cp.post(
        f"/api/orgs/{org}/apis/{api['id']}/revisions",
        json={
            "routeSpec": [{"name": "all", "uri": "/v1/*", "plugins": {"limit-count": limit}}],
            "environmentUpstreams": [{"environmentId": env["id"], "upstreamId": upstream["id"]}],
        },
    )
    assert revision.status_code == 201, revision.text
    deployed = cp.post(
        f"/api/orgs/{org}/apis/{api['id']}/revisions/{revision.json()['id']}/deploy",
        json={"environmentId": env["id"]},
    )
    assert deployed.status_code == 200, deployed.text

    nodes: list[tuple[subprocess.Popen[bytes], httpx.Client]] = []
    ready: list[str] = []
    try:
        for name in ("node-a", "node-b"):
            node_token = cp.post(
                f"/api/orgs/{org}/envs/{env['id']}/dataplane-tokens", json={"name": name}
            ).json()["token"]
            environ = {k: v for k, v in os.environ.items() if not k.startswith("PORTICO_")}
            environ.update(
                PORTICO_DATA_DIR=str(tmp_path / name),
                PORTICO_GATEWAY_LISTEN=f"127.0.0.1:{free_port()}",
                PORTICO_METRICS_LISTEN=f"127.0.0.1:{free_port()}",
                PORTICO_GATEWAY_NODE_ID=name,
                PORTICO_GATEWAY_EGRESS_ALLOW='["127.0.0.0/8"]',  # the test's Redis is loopback
            )
            args = ["--control-plane", portico["control"], "--environment", env["id"]]
            with (tmp_path / f"{name}.log").open("a") as log:
                process = subprocess.Popen(
                    [PORTICO, "gateway", *args, "--token", node_token],
                    env=environ,
                    stdout=log,
                    stderr=log,
                )
            client = httpx.Client(
                base_url=f"http://{environ['PORTICO_GATEWAY_LISTEN']}",
                headers={"Host": HOST},
                timeout=10,
            )
            nodes.append((process, client))
            ready.append(f"http://{environ['PORTICO_METRICS_LISTEN']}/ready")
        # the deploy came first: a node is ready with it (no probe request spends the count)
        for (process, _), url in zip(nodes, ready, strict=True):
            wait_for(lambda url=url: httpx.get(url).status_code == 200, process)

        # one burst, spread over both processes
        def call(i: int) -> int:
            return nodes[i % 2][1].get(f"/v1/{i}").status_code

        with ThreadPoolExecutor(max_workers=30) as pool:
            statuses = list(pool.map(call, range(3 * COUNT)))
        assert statuses.count(200) == COUNT, statuses
        assert statuses.count(429) == 2 * COUNT, statuses  # per-process counting: 2 * COUNT
    finally:
        for process, client in nodes:
            client.close()
            process.terminate()
        for process, _ in nodes:
            process.wait(timeout=15)
