"""The product as a new user runs it: real `portico` processes, real sockets.

`portico db upgrade`, `portico bootstrap` (generated password printed once; a second run
reuses everything), `portico serve`, then sign in, create an environment and an upstream with
active and passive health checks, read both back and find both in the audit log.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.portico_process import PORTICO, start_serve, stop
from tests.support.ports import free_port

pytestmark = pytest.mark.e2e


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PORTICO, *args], env=env, capture_output=True, text=True, timeout=120, check=True
    )


@pytest.fixture
def portico_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTICO_")}
    env.update(
        PORTICO_DATA_DIR=str(tmp_path / "var"),
        PORTICO_DATABASE_URL=database_url,
        PORTICO_LISTEN=f"127.0.0.1:{free_port()}",
        PORTICO_BOOTSTRAP_ADMIN_EMAIL="owner@example.com",
        PORTICO_LOG_FORMAT="json",
    )
    return env


@pytest.fixture
def server(portico_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    run(portico_env, "db", "upgrade")
    first = run(portico_env, "bootstrap")
    match = re.search(r"generated password \(shown once, not stored\): (\S+)", first.stderr)
    assert match, first.stderr
    password = match.group(1)
    second = run(portico_env, "bootstrap")
    assert "exists; reusing it" in second.stderr
    assert password not in second.stderr

    log_path = tmp_path / "serve.log"
    process = start_serve(portico_env, log_path, "--no-migrate", timeout=30)
    try:
        yield f"http://{portico_env['PORTICO_LISTEN']}", password, log_path
    finally:
        stop(process)


def test_new_user_journey(server: tuple[str, str, Path]) -> None:
    base, password, log_path = server
    with httpx.Client(base_url=base, timeout=10) as http:
        tokens = http.post(
            "/api/auth/login", json={"email": "owner@example.com", "password": password}
        ).json()
        auth = {"Authorization": f"Bearer {tokens['token']}"}
        me = http.get("/api/me", headers=auth).json()
        org_id = me["orgs"][0]["id"]
        envs = http.get(f"/api/orgs/{org_id}/envs", headers=auth).json()
        assert [e["name"] for e in envs["items"]] == ["test"]

        env = http.post(
            f"/api/orgs/{org_id}/envs",
            json={"name": "staging", "gatewayHosts": ["staging.gw.example.com"]},
            headers=auth,
        )
        assert env.status_code == 201, env.text
        env_id = env.json()["id"]
        specification = {
            "nodes": [{"host": "127.0.0.1", "port": 8081, "weight": 2}],
            "checks": {
                "active": {
                    "type": "http",
                    "http_path": "/health",
                    "timeout": 2,
                    "healthy": {"interval": 5, "successes": 2, "http_statuses": [200]},
                    "unhealthy": {"interval": 3, "http_failures": 3, "timeouts": 2},
                },
                "passive": {
                    "healthy": {"successes": 3},
                    "unhealthy": {"http_failures": 4, "http_statuses": [500, 502]},
                },
            },
        }
        upstream = http.post(
            f"/api/orgs/{org_id}/envs/{env_id}/upstreams",
            json={"name": "orders", "specification": specification},
            headers=auth,
        )
        assert upstream.status_code == 201, upstream.text
        upstream_id = upstream.json()["id"]

        read_env = http.get(f"/api/orgs/{org_id}/envs/{env_id}", headers=auth).json()
        assert read_env["gatewayHosts"] == ["staging.gw.example.com"]
        read_upstream = http.get(
            f"/api/orgs/{org_id}/envs/{env_id}/upstreams/{upstream_id}", headers=auth
        ).json()
        checks = read_upstream["specification"]["checks"]
        assert checks["active"]["http_path"] == "/health"
        assert checks["active"]["healthy"]["interval"] == 5
        assert checks["passive"]["unhealthy"]["http_failures"] == 4
        assert checks["passive"]["type"] == "http"  # the default, filled in

        audit = http.get(f"/api/orgs/{org_id}/audit-log", headers=auth).json()
        found = {(e["action"], e["entityId"]) for e in audit["items"]}
        assert ("environment.create", env_id) in found
        assert ("upstream.create", upstream_id) in found
        assert audit["items"][0]["action"] == "upstream.create"  # newest first

        expired = http.get("/api/me", headers={"Authorization": "Bearer x.y.z"})
        assert expired.status_code == 401

    log = log_path.read_text()
    assert password not in log
    assert tokens["token"] not in log and tokens["refreshToken"] not in log


def test_serve_refuses_a_database_behind_the_migrations(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTICO_")}
    env.update(PORTICO_DATA_DIR=str(tmp_path), PORTICO_LISTEN=f"127.0.0.1:{free_port()}")
    result = subprocess.run(
        [PORTICO, "serve", "--no-migrate"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "run `portico db upgrade`" in result.stderr
