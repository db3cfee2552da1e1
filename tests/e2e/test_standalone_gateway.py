"""A standalone `portico gateway` node: follows the control plane, reports heartbeats, keeps
serving when the control plane is down, and restarts from its disk snapshot."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_gateway import (  # noqa: F401 - fixtures
    backend,
    portico,
    rollups,
    wait_for,
)
from tests.support.portico_process import PORTICO
from tests.support.ports import free_port

pytestmark = pytest.mark.e2e
HOST = "edge.example.com"


def start_node(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("a") as handle:
        return subprocess.Popen([PORTICO, "gateway", *args], env=env, stdout=handle, stderr=handle)


@pytest.fixture
def node_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTICO_")}
    env.update(
        PORTICO_DATA_DIR=str(tmp_path / "node"),
        PORTICO_GATEWAY_LISTEN=f"127.0.0.1:{free_port()}",
        PORTICO_METRICS_LISTEN=f"127.0.0.1:{free_port()}",
        PORTICO_TELEMETRY_INTERVAL_SECONDS="0.3",
    )
    return env


def test_node_follows_survives_the_control_plane_and_restarts_from_disk(
    portico: dict[str, str],  # noqa: F811
    backend: int,  # noqa: F811
    node_env: dict[str, str],
    tmp_path: Path,
) -> None:
    cp = httpx.Client(base_url=portico["control"], timeout=10)
    token = cp.post(
        "/api/auth/login", json={"email": "owner@example.com", "password": "owner-password-123"}
    ).json()["token"]
    cp.headers["Authorization"] = f"Bearer {token}"
    org = cp.get("/api/me").json()["orgs"][0]["id"]
    env = cp.post(f"/api/orgs/{org}/envs", json={"name": "edge", "gatewayHosts": [HOST]}).json()
    node_token = cp.post(
        f"/api/orgs/{org}/envs/{env['id']}/dataplane-tokens", json={"name": "node-1"}
    ).json()["token"]
    upstream = cp.post(
        f"/api/orgs/{org}/envs/{env['id']}/upstreams",
        json={"name": "echo", "specification": {"nodes": [{"host": "127.0.0.1", "port": backend}]}},
    ).json()
    api = cp.post(f"/api/orgs/{org}/apis", json={"name": "edge-api"}).json()
    revision = cp.post(
        f"/api/orgs/{org}/apis/{api['id']}/revisions",
        json={
            "routeSpec": [{"name": "all", "uri": "/v1/*", "plugins": {}}],
            "environmentUpstreams": [{"environmentId": env["id"], "upstreamId": upstream["id"]}],
        },
    ).json()
    ready = f"http://{node_env['PORTICO_METRICS_LISTEN']}/ready"
    gateway = httpx.Client(
        base_url=f"http://{node_env['PORTICO_GATEWAY_LISTEN']}", headers={"Host": HOST}, timeout=5
    )
    args = (
        "--control-plane",
        portico["control"],
        "--environment",
        env["id"],
        "--token",
        node_token,
    )
    log = tmp_path / "node.log"
    node = start_node(node_env, log, *args)
    try:
        wait_for(lambda: httpx.get(ready).status_code == 200, node)
        assert gateway.get("/v1/x").status_code == 404  # nothing deployed yet
        deployed = cp.post(
            f"/api/orgs/{org}/apis/{api['id']}/revisions/{revision['id']}/deploy",
            json={"environmentId": env["id"]},
        )
        assert deployed.status_code == 200
        version = deployed.json()["configVersion"]
        wait_for(lambda: gateway.get("/v1/x").status_code == 200, node, timeout=10)
        assert gateway.get("/v1/x").json()["path"] == "/v1/x"

        # the control plane lists the node with the version it runs
        def in_sync() -> bool:
            nodes = cp.get(f"/api/orgs/{org}/envs/{env['id']}/nodes").json()
            return any(n["configVersion"] == version and n["inSync"] for n in nodes["items"])

        wait_for(in_sync, node, timeout=20)

        # and with its view of the upstream's health (the upstream has no checks: its one
        # target is healthy, never probed)
        def health_reported() -> bool:
            path = f"/api/orgs/{org}/envs/{env['id']}/upstreams/{upstream['id']}/health"
            items = cp.get(path).json()["items"]
            return any(n["reported"] for n in items)

        wait_for(health_reported, node, timeout=20)
        path = f"/api/orgs/{org}/envs/{env['id']}/upstreams/{upstream['id']}/health"
        [reported] = [n for n in cp.get(path).json()["items"] if n["reported"]]
        [target] = reported["targets"]
        assert (target["host"], target["port"], target["healthy"]) == ("127.0.0.1", backend, True)
        assert (target["probes"], reported["probing"]) == (0, False)

        # its traffic reaches the control plane's rollups (by POST /api/dataplane/v1/telemetry)
        def delivered() -> bool:
            totals = asyncio.run(rollups(portico["database_url"], env["id"]))
            return totals.get((200, ""), 0) >= 2

        wait_for(delivered, node, timeout=20)

        # control plane down: the node keeps serving what it has
        os.kill(int(portico["pid"]), signal.SIGTERM)
        wait_for(lambda: _down(portico["control"]))
        assert gateway.get("/v1/still").status_code == 200

        # and a restarted node serves its disk snapshot without any control plane
        node.terminate()
        node.wait(timeout=15)
        node = start_node(node_env, log, *args)
        wait_for(lambda: httpx.get(ready).status_code == 200, node)
        assert gateway.get("/v1/from-disk").status_code == 200
    finally:
        node.terminate()
        node.wait(timeout=15)


def test_ready_is_503_until_a_first_config_loads(node_env: dict[str, str], tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    node = start_node(
        node_env,
        tmp_path / "node.log",
        "--control-plane",
        dead,
        "--environment",
        "00000000-0000-0000-0000-000000000000",
        "--token",
        "pdp_nothing",
    )
    ready = f"http://{node_env['PORTICO_METRICS_LISTEN']}/ready"
    try:
        wait_for(lambda: httpx.get(ready).status_code == 503, node)
    finally:
        node.terminate()
        node.wait(timeout=15)


def _down(url: str) -> bool:
    try:
        httpx.get(f"{url}/healthz", timeout=1)
    except httpx.TransportError:
        return True
    return False
