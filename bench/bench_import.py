"""Gateway import of 1,000 APIs from a ``portico`` connection as an ``import-apis`` job.
Goal: at most 60 s, memory flat, progress visible while it runs, cancellable mid-way.

The remote side is a real management service in a process of its own (uvicorn on loopback,
its own SQLite store) holding 1,000 APIs, each with an OpenAPI document of about 10 KB and
one revision, bulk-inserted in its store (creating them through its API would take longer
than the import). The marketplace runs in this process: its app over ASGI, its SQLite store,
and a jobs worker with the same settings as ``portico serve``'s. Each run starts the job
through ``POST /gateways/connections/{id}/jobs`` and polls ``GET /jobs/{id}``, printing the
progress it sees.

* memory: a warm-up job (50 APIs), then 250, then 1,000, each into a connection of its own;
  the growth of the peak RSS during a job (VmHWM reset just before) should not grow with
  the number of APIs;
* time: the 1,000-API job, PASS when at most 60 s;
* cancellation: another 1,000-API job cancelled once 300 are done; PASS when it ends
  cancelled with exactly as many nodes as its progress says, each one whole (document and
  revision).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from sqlalchemy import func, insert, select
from starlette.routing import Mount

from portico.app import create_app
from portico.bootstrap import bootstrap
from portico.core.account import User
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.db.migrate import upgrade_async
from portico.core.job_worker import JobWorker
from portico.core.passwords import hash_password
from portico.core.settings import Settings
from portico.management.api.models import Api
from portico.management.revision.models import Revision
from portico.marketplace.app import PREFIX
from portico.marketplace.imports.jobs import BATCH
from portico.marketplace.node.models import CatalogueNode

APIS = 1000
GOAL_SECONDS = 60.0
CANCEL_AFTER = 300
SECRET = "bench-secret-0123456789abcdef0123456789"  # noqa: S105 (a throwaway store)
ADMIN, PASSWORD = "bench@example.com", "bench-password-123"


def document(index: int) -> dict[str, Any]:
    """About 10 KB: 12 paths of two operations each, with schemas."""
    name = f"api-{index:04d}"
    paths = {
        f"/{name}/items{p}/{{id}}": {
            method: {
                "operationId": f"{method}Item{p}",
                "summary": f"{method} one item of collection {p} of {name}",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": {
                        "description": "the item",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Item"}}
                        },
                    },
                    "404": {"description": "no such item"},
                },
            }
            for method in ("get", "put")
        }
        for p in range(12)
    }
    item = {
        "type": "object",
        "properties": {f"field{f}": {"type": "string", "maxLength": 64} for f in range(20)},
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": name, "version": f"1.{index}.0", "description": f"The {name} API."},
        "paths": paths,
        "components": {"schemas": {"Item": item}},
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def settings_for(workdir: Path, url: str, **overrides: Any) -> Settings:
    return Settings(
        environment="test",
        data_dir=workdir,
        database_url=url,
        secret_key=SecretStr(SECRET),
        log_format="text",
        log_level="WARNING",
        _env_file=None,  # type: ignore[call-arg]
        **overrides,
    )


# ------------------------------------------------------------------ the remote side


async def build_remote(workdir: Path) -> tuple[str, uuid.UUID]:
    """A migrated, bootstrapped store with APIS APIs; its URL and the organisation's id."""
    url = f"sqlite+aiosqlite:///{workdir / 'remote.db'}"
    await upgrade_async(url)
    settings = settings_for(
        workdir,
        url,
        bootstrap_admin_email=ADMIN,
        bootstrap_admin_password=SecretStr(PASSWORD),
    )
    database = Database(url)
    try:
        org_id = (await bootstrap(settings, database)).org_id
        now = datetime.now(UTC)
        for first in range(0, APIS, 250):
            apis, revisions = [], []
            for index in range(first, min(first + 250, APIS)):
                api_id = uuid.uuid4()
                apis.append(
                    {
                        "id": api_id,
                        "org_id": org_id,
                        "name": f"api-{index:04d}",
                        "description": f"The api-{index:04d} API.",
                        "next_revision_number": 2,
                        "spec_document": document(index),
                        "created_at": now,
                        "updated_at": now,
                    }
                )
                revisions.append(
                    {
                        "id": uuid.uuid4(),
                        "org_id": org_id,
                        "api_id": api_id,
                        "number": 1,
                        "service_spec": {"name": f"api-{index:04d}", "plugins": {}},
                        "route_spec": [],
                        "created_at": now,
                        "updated_at": now,
                    }
                )
            async with database.session() as session, session.begin():
                await session.execute(insert(Api), apis)
                await session.execute(insert(Revision), revisions)
    finally:
        await database.dispose()
    return url, org_id


@contextlib.contextmanager
def serve_remote(workdir: Path, url: str) -> Iterator[str]:
    """The remote management service in a process of its own."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PORTICO_")},
        "PORTICO_ENVIRONMENT": "test",
        "PORTICO_DATA_DIR": str(workdir),
        "PORTICO_DATABASE_URL": url,
        "PORTICO_SECRET_KEY": SECRET,
        "PORTICO_LOG_LEVEL": "WARNING",
    }
    code = (
        "import uvicorn\n"
        "from portico.app import create_app\n"
        "from portico.core.settings import Settings\n"
        f"uvicorn.run(create_app(Settings()), host='127.0.0.1', port={port}, "
        "log_level='warning', access_log=False)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the remote management service did not start")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)


def service_account(base: str, org_id: uuid.UUID) -> str:
    with httpx.Client(base_url=base, timeout=30) as http:
        signed_in = http.post("/api/auth/login", json={"email": ADMIN, "password": PASSWORD})
        signed_in.raise_for_status()
        http.headers["Authorization"] = f"Bearer {signed_in.json()['token']}"
        roles = http.get(f"/api/orgs/{org_id}/roles", params={"size": 100}).json()["items"]
        integration = next(r["id"] for r in roles if r["name"] == "Integration")
        made = http.post(
            f"/api/orgs/{org_id}/service-accounts",
            json={"name": "marketplace", "roleIds": [integration]},
        )
        made.raise_for_status()
        token: str = made.json()["token"]
        return token


# ------------------------------------------------------------------ the marketplace


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    except OSError:
        return False
    return True


class Marketplace:
    def __init__(self, http: httpx.AsyncClient, headers: dict[str, str], database: Database):
        self.http = http
        self.headers = headers
        self.database = database

    async def connection(self, name: str, remote: str, org_id: uuid.UUID, token: str) -> str:
        body = {
            "name": name,
            "source": "portico",
            "config": {"base_url": remote, "org_id": str(org_id), "token": token},
        }
        made = await self.http.post(
            f"{PREFIX}/gateways/connections", json=body, headers=self.headers
        )
        made.raise_for_status()
        connection_id: str = made.json()["data"]["id"]
        return connection_id

    async def start(self, connection_id: str, api_ids: list[str] | None = None) -> str:
        body: dict[str, Any] = {"kind": "import-apis"}
        if api_ids is not None:
            body["api_ids"] = api_ids
        started = await self.http.post(
            f"{PREFIX}/gateways/connections/{connection_id}/jobs", json=body, headers=self.headers
        )
        assert started.status_code == 202, started.text
        job_id: str = started.json()["job_id"]
        return job_id

    async def job(self, job_id: str) -> dict[str, Any]:
        got = await self.http.get(f"{PREFIX}/jobs/{job_id}", headers=self.headers)
        got.raise_for_status()
        data: dict[str, Any] = got.json()["data"]
        return data

    async def remote_ids(self, connection_id: str, count: int) -> list[str]:
        listed = await self.http.get(
            f"{PREFIX}/gateways/connections/{connection_id}/remote/apis?limit={count}",
            headers=self.headers,
        )
        listed.raise_for_status()
        return [a["api_id"] for a in listed.json()["data"]]

    async def run(
        self, connection_id: str, api_ids: list[str] | None = None, *, cancel_after: int = 0
    ) -> tuple[float, dict[str, Any], list[tuple[float, int]]]:
        """Start a job and poll it to its end (asking to cancel it once ``cancel_after``
        are done): seconds, the job as it ended, the progress seen along the way."""
        started = time.perf_counter()
        job_id = await self.start(connection_id, api_ids)
        seen: list[tuple[float, int]] = []
        cancelled = False
        while True:
            await asyncio.sleep(0.5)
            job = await self.job(job_id)
            done = job["progress"]["done"]
            if not seen or seen[-1][1] != done:
                seen.append((time.perf_counter() - started, done))
            if cancel_after and not cancelled and done >= cancel_after:
                answer = await self.http.delete(f"{PREFIX}/jobs/{job_id}", headers=self.headers)
                answer.raise_for_status()
                cancelled = True
            if job["status"] in ("succeeded", "failed", "cancelled"):
                return time.perf_counter() - started, job, seen

    async def nodes_of(self, connection_id: str) -> tuple[int, int]:
        """Nodes imported from the connection, and how many of them are whole."""
        async with self.database.session() as session:
            cid = uuid.UUID(connection_id)
            total = await session.scalar(
                select(func.count())
                .select_from(CatalogueNode)
                .where(CatalogueNode.connection_id == cid)
            )
            whole = await session.scalar(
                select(func.count())
                .select_from(CatalogueNode)
                .where(
                    CatalogueNode.connection_id == cid,
                    CatalogueNode.documentation.is_not(None),
                    CatalogueNode.remote_revision == "1",
                )
            )
        return int(total or 0), int(whole or 0)


def progress_line(seen: list[tuple[float, int]], total: int) -> str:
    shown = seen if len(seen) <= 8 else [*seen[:4], *seen[-4:]]
    return ", ".join(f"{done}/{total} at {at:.1f} s" for at, done in shown)


async def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="portico-bench-import-"))
    print(f"building a remote management service with {APIS} APIs ...")
    started = time.perf_counter()
    remote_url, org_id = await build_remote(workdir / "remote")
    print(f"  built in {time.perf_counter() - started:.1f} s")

    local_url = f"sqlite+aiosqlite:///{workdir / 'marketplace.db'}"
    await upgrade_async(local_url)
    settings = settings_for(
        workdir / "marketplace", local_url, marketplace_egress_allow=["127.0.0.1/32"]
    )
    database = Database(local_url)
    clock = Clock()
    app = create_app(settings, database=database, clock=clock)
    admin_api = next(r.app for r in app.routes if isinstance(r, Mount) and r.path == PREFIX)
    async with database.session() as session, session.begin():
        user = User(
            id=uuid.uuid4(),
            email="root@portal.example.com",
            password_hash=hash_password("x" * 12),
            is_platform_admin=True,
        )
        session.add(user)
        await session.flush()
        issued = await admin_api.state.id_tokens.issue(session, user_id=user.id, email=user.email)
    worker = JobWorker(database, clock, settings=settings, poll_seconds=0.05)

    with serve_remote(workdir / "remote", remote_url) as remote:
        token = service_account(remote, org_id)
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://bench", timeout=120
        ) as http:
            market = Marketplace(http, {"Authorization": f"Bearer {issued.token}"}, database)
            worker.start()
            try:
                await report(market, remote, org_id, token)
            finally:
                await worker.stop()
    await database.dispose()


async def report(market: Marketplace, remote: str, org_id: uuid.UUID, token: str) -> None:
    warm = await market.connection("warm-up", remote, org_id, token)
    ids = await market.remote_ids(warm, 250)
    await market.run(warm, ids[:50])

    print("memory: growth of the peak RSS during a job (VmHWM reset before each)")
    growth: dict[int, float] = {}
    for count in (250, APIS):
        connection = await market.connection(f"memory-{count}", remote, org_id, token)
        before = status_kib("VmRSS")
        if not reset_peak():
            print("  (cannot reset VmHWM: the figures include earlier peaks)")
        seconds, job, seen = await market.run(connection, ids[:count] if count < APIS else None)
        growth[count] = (status_kib("VmHWM") - before) / 1024
        assert job["status"] == "succeeded", job
        print(
            f"  {count:>5} APIs  {seconds:5.1f} s  RSS before {before / 1024:6.1f} MiB, "
            f"peak +{growth[count]:5.1f} MiB   result {job['result']}"
        )
        if count == APIS:
            print(f"  progress seen: {progress_line(seen, count)}")
            verdict = "PASS" if seconds <= GOAL_SECONDS else "FAIL"
            print(f"time: {APIS} APIs in {seconds:.1f} s (goal <= {GOAL_SECONDS:.0f} s): {verdict}")
    flat = growth[APIS] <= max(growth[250] * 1.5, growth[250] + 8)
    print(
        f"memory: +{growth[250]:.1f} MiB for 250, +{growth[APIS]:.1f} MiB for {APIS}: "
        + ("flat, PASS" if flat else "grows with the inventory, FAIL")
    )

    connection = await market.connection("cancelled", remote, org_id, token)
    seconds, job, seen = await market.run(connection, cancel_after=CANCEL_AFTER)
    total, whole = await market.nodes_of(connection)
    done = job["progress"]["done"]
    ok = job["status"] == "cancelled" and total == whole == done and done % BATCH == 0
    print(
        f"cancellation after {CANCEL_AFTER}: {job['status']} at {seconds:.1f} s with "
        f"progress {done}/{job['progress']['total']}; {total} nodes, {whole} whole "
        f"(batches of {BATCH}): " + ("PASS" if ok else "FAIL")
    )


if __name__ == "__main__":
    asyncio.run(main())
