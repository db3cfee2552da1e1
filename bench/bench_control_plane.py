"""Control-plane request path, measured against the framework's floor.

Two apps answer the same ``GET /api/orgs/{orgId}/envs`` (20 environments) in one run:

* **portico**: the real stack — request-id middleware, bearer JWT verification, account
  lookup, membership and effective-permission query, strict list-query parsing, a paginated
  SQL query with count, response model serialisation;
* **reference**: a bare FastAPI endpoint returning the same JSON from memory.

Both are driven in-process over ASGI (no sockets, so the client's cost is the same for both)
with a fixed number of requests, on SQLite. The ratio portico/reference says what the kernel
costs per request on top of the framework. Printed, never asserted.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from fastapi import FastAPI
from pydantic import SecretStr

from portico.app import create_app
from portico.core.account import User
from portico.core.audit import Actor
from portico.core.db.engine import Database
from portico.core.db.migrate import upgrade_async
from portico.core.passwords import hash_password
from portico.core.settings import Settings
from portico.management.environment.models import Environment
from portico.management.org import service as org_service
from portico.management.org.schemas import OrganizationCreate

REQUESTS = int(__import__("os").environ.get("BENCH_REQUESTS", "1500"))
WARMUP = 100


async def measure(client: httpx.AsyncClient, url: str, headers: dict[str, str]) -> list[float]:
    for _ in range(WARMUP):
        (await client.get(url, headers=headers)).raise_for_status()
    timings = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        response = await client.get(url, headers=headers)
        timings.append(time.perf_counter() - started)
        response.raise_for_status()
    return timings


def summary(name: str, timings: list[float]) -> float:
    ordered = sorted(timings)
    rps = len(timings) / sum(timings)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[int(len(ordered) * 0.99)] * 1000
    print(f"  {name:<10} {rps:8.0f} req/s   p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    return rps


async def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="portico-bench-"))
    url = f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
    await upgrade_async(url)
    settings = Settings(
        environment="test",
        data_dir=workdir,
        database_url=url,
        secret_key=SecretStr("bench-secret-0123456789abcdef0123456789"),
        _env_file=None,  # type: ignore[call-arg]
    )
    database = Database(url)
    async with database.session() as session, session.begin():
        user = User(
            id=uuid.uuid4(), email="bench@example.com", password_hash=hash_password("x" * 12)
        )
        session.add(user)
        await session.flush()
        org = await org_service.create(
            session=session, actor=Actor.system(), data=OrganizationCreate(name="bench"), owner=user
        )
        for i in range(20):
            session.add(Environment(id=uuid.uuid4(), org_id=org.id, name=f"env-{i:02d}", hosts=[]))
    app = create_app(settings, database=database)
    token = app.state.access_tokens.issue(str(user.id)).token
    path = f"/api/orgs/{org.id}/envs"
    headers = {"Authorization": f"Bearer {token}"}

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as c:
        payload = (await c.get(path, headers=headers)).json()
        portico_timings = await measure(c, path, headers)

    reference = FastAPI()

    @reference.get("/api/orgs/{org_id}/envs")
    async def envs(org_id: str) -> dict[str, object]:
        return payload

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=reference), base_url="http://b"
    ) as c:
        reference_timings = await measure(c, path, headers)

    print(f"GET /api/orgs/{{orgId}}/envs, 20 items, {REQUESTS} sequential requests, SQLite")
    ours = summary("portico", portico_timings)
    floor = summary("reference", reference_timings)
    print(f"  ratio portico/reference throughput: {ours / floor:.2f}")
    await database.dispose()


if __name__ == "__main__":
    asyncio.run(main())
