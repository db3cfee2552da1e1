"""Deploy path: deploy and dry-run of a 1,000-route API, snapshot build at 1k and 10k routes,
long-poll wake-up after a deploy. SQLite, in-process over ASGI. Printed, never asserted.

The snapshot build must stay linear in the number of routes: its reference is itself at a
tenth of the size, and the ratio 10k/1k should be near 10.
"""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from portico.app import create_app
from portico.core.account import User
from portico.core.audit import Actor
from portico.core.db.engine import Database
from portico.core.db.migrate import upgrade_async
from portico.core.passwords import hash_password
from portico.core.settings import Settings
from portico.management.deployment.snapshot import assemble, compile_state, load_state
from portico.management.environment.models import Environment
from portico.management.org import service as org_service
from portico.management.org.schemas import OrganizationCreate

ROUTES_PER_API = 1000


def routes(prefix: str, count: int) -> list[dict[str, Any]]:
    return [
        {
            "name": f"{prefix}-{i}",
            "uri": f"/{prefix}/r{i}/:id",
            "methods": ["GET", "POST"],
            "plugins": {"limit-count": {"count": 100, "time_window": 60}} if i % 2 else {},
        }
        for i in range(count)
    ]


async def timed(call: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await call
    return time.perf_counter() - started, result


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
        user = User(id=uuid.uuid4(), email="b@example.com", password_hash=hash_password("x" * 12))
        session.add(user)
        await session.flush()
        org = await org_service.create(
            session=session, actor=Actor.system(), data=OrganizationCreate(name="b"), owner=user
        )
    app = create_app(settings, database=database)
    headers = {"Authorization": f"Bearer {app.state.access_tokens.issue(str(user.id)).token}"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://b", timeout=120) as http:
        base = f"/api/orgs/{org.id}"
        env = (await http.post(f"{base}/envs", json={"name": "e"}, headers=headers)).json()["id"]
        upstream = (
            await http.post(
                f"{base}/envs/{env}/upstreams",
                json={"name": "u", "specification": {"nodes": [{"host": "127.0.0.1", "port": 9}]}},
                headers=headers,
            )
        ).json()["id"]

        async def deployable(name: str) -> tuple[str, str]:
            api = (await http.post(f"{base}/apis", json={"name": name}, headers=headers)).json()
            revision = await http.post(
                f"{base}/apis/{api['id']}/revisions",
                json={
                    "routeSpec": routes(name, ROUTES_PER_API),
                    "environmentUpstreams": [{"environmentId": env, "upstreamId": upstream}],
                },
                headers=headers,
            )
            revision.raise_for_status()
            return api["id"], revision.json()["id"]

        dry_runs, deploys = [], []
        for index in range(10):
            api_id, revision_id = await deployable(f"api{index}")
            path = f"{base}/apis/{api_id}/revisions/{revision_id}"
            seconds, response = await timed(
                http.post(f"{path}/deploy/dry-run", json={"environmentId": env}, headers=headers)
            )
            response.raise_for_status()
            dry_runs.append(seconds)
            seconds, response = await timed(
                http.post(f"{path}/deploy", json={"environmentId": env}, headers=headers)
            )
            response.raise_for_status()
            deploys.append(seconds)
        print(f"deploy of a {ROUTES_PER_API}-route API into an environment of 0..9k routes:")
        print(f"  dry-run  median {statistics.median(dry_runs) * 1000:8.1f} ms")
        print(f"  deploy   median {statistics.median(deploys) * 1000:8.1f} ms")
        print(f"  (first deploy {deploys[0] * 1000:.1f} ms, tenth {deploys[-1] * 1000:.1f} ms)")

        async with database.session() as session:
            environment = await session.get(Environment, uuid.UUID(env))
            assert environment is not None
            state = await load_state(session, environment)
            one_api = dataclasses.replace(state, deployed=state.deployed[:1])

            def build(s: Any) -> float:
                started = time.perf_counter()
                assemble(s, compile_state(s), 1)
                return time.perf_counter() - started

            small = min(build(one_api) for _ in range(5))
            large = min(build(state) for _ in range(3))
            loaded_started = time.perf_counter()
            await load_state(session, environment)
            load = time.perf_counter() - loaded_started
        routes_total = sum(len(d.source.route_spec) for d in state.deployed)
        factor = routes_total // ROUTES_PER_API
        print("snapshot build (compile + assemble), best of runs:")
        print(f"  {ROUTES_PER_API:>6} routes {small * 1000:8.1f} ms")
        print(
            f"  {routes_total:>6} routes {large * 1000:8.1f} ms   (loading: {load * 1000:.1f} ms)"
        )
        print(f"  ratio {factor}x routes → {large / small:.1f}x time (linear = {factor})")

        version = (await http.get(f"/api/dataplane/v1/envs/{env}/config", headers=headers)).headers[
            "x-portico-config-version"
        ]
        api_id, revision_id = await deployable("poll")
        waiter = asyncio.create_task(
            http.get(
                f"/api/dataplane/v1/envs/{env}/config?since={version}&wait=30", headers=headers
            )
        )
        await asyncio.sleep(0.2)
        path = f"{base}/apis/{api_id}/revisions/{revision_id}"
        started = time.perf_counter()
        (
            await http.post(f"{path}/deploy", json={"environmentId": env}, headers=headers)
        ).raise_for_status()
        deployed_at = time.perf_counter()
        answer = await waiter
        woke_at = time.perf_counter()
        print("long-poll wake-up after a deploy (same process):")
        print(
            f"  deploy took {(deployed_at - started) * 1000:.1f} ms; the waiting poll answered "
            f"{(woke_at - deployed_at) * 1000:.1f} ms after it returned "
            f"(version {answer.headers['x-portico-config-version']}, "
            f"{len(answer.content) / 1e6:.1f} MB)"
        )
    await database.dispose()


if __name__ == "__main__":
    asyncio.run(main())
