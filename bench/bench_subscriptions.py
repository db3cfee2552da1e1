"""Approval → the app's key admitted by the gateway, and revocation → refused, against the
1 s goal of the design ("from the moment the approve (revoke) call returns, the app's key is
admitted (refused) by every gateway node within 1 s"). Printed, never asserted.

The remote side is the tests' harness (``tests/marketplace/subscriptions/harness.py``): a
real management service (uvicorn on loopback, its own SQLite store) and a real gateway fed
by that store as the embedded gateway is (the snapshot feeder, woken by each publish), one
API behind key-auth and product-quota, to an echo backend. The marketplace runs in this
process over ASGI with its own SQLite store, its jobs worker and the retry schedule built
as ``portico serve`` builds them (``worker.build_workers``' settings: the worker is woken by
the approval's commit, and polls every ``PORTICO_WORKER_POLL_SECONDS`` otherwise).

Each of ``BENCH_ROUNDS`` (20) rounds: a new developer app requests a subscription to the
API; ``POST /subscriptions/{id}/approve``; the subscription is read until it is ``active``,
then the gateway is asked with the app's key every 5 ms until it answers 200; then ``POST
/subscriptions/{id}/revoke`` and the gateway asked until 401 or 403. Times are from the
return of the call; the call's own time is shown beside.

Everything runs in one process and one event loop (the marketplace, its worker, the
management service, the gateway and its feeder, and the polling client) on whatever cores
the machine has: each side waits for the others' turns, which a deployment (separate
processes) does not. The figures are an upper bound of the path's latency.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from pydantic import SecretStr
from starlette.routing import Mount

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' harness

from portico.app import create_app
from portico.core.account import User
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.db.migrate import upgrade_async
from portico.core.passwords import hash_password
from portico.core.settings import Settings
from portico.marketplace.app import PREFIX
from portico.marketplace.node.models import Bundle
from portico.worker import build_workers
from tests.marketplace.subscriptions.harness import (
    HOST,
    developer_app,
    published_node,
    remote_side,
    request_subscription,
)

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "20"))
GOAL = 1.0
POLL = 0.005


async def until(check) -> float:  # type: ignore[no-untyped-def]
    """Seconds until ``check()`` is true, polled every 5 ms (at most 30 s)."""
    start = time.perf_counter()
    while not await check():
        if time.perf_counter() - start > 30:
            raise TimeoutError("not within 30 s")
        await asyncio.sleep(POLL)
    return time.perf_counter() - start


def line(label: str, values: list[float]) -> str:
    p50, worst = statistics.median(values), max(values)
    verdict = "PASS" if worst <= GOAL else "over the goal"
    return (
        f"{label:<28} p50 {p50 * 1000:7.1f} ms   max {worst * 1000:7.1f} ms   "
        f"goal {GOAL * 1000:.0f} ms: {verdict}"
    )


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-subscriptions-") as tmp:
        root = Path(tmp)
        (root / "remote").mkdir()
        remote_url = f"sqlite+aiosqlite:///{root / 'remote' / 'portico.db'}"
        local_url = f"sqlite+aiosqlite:///{root / 'portal.db'}"
        await upgrade_async(remote_url)
        await upgrade_async(local_url)
        settings = Settings(
            environment="test",
            data_dir=root,
            database_url=local_url,
            secret_key=SecretStr("bench-secret-key-0123456789abcdef0123456789"),
            log_json=False,
            log_level="WARNING",
            marketplace_egress_allow=["127.0.0.1/32"],
            _env_file=None,  # type: ignore[call-arg]
        )
        database, clock = Database(local_url), Clock()
        app = create_app(settings, database=database, clock=clock)
        admin_api = next(r.app for r in app.routes if isinstance(r, Mount) and r.path == PREFIX)
        async with database.session() as session, session.begin():
            admin = User(
                id=uuid.uuid4(),
                email="admin@bench.example.com",
                display_name="admin",
                password_hash=hash_password("bench-password-123"),
                is_platform_admin=True,
            )
            developer = User(
                id=uuid.uuid4(),
                email="dev@bench.example.com",
                display_name="Ada Lovelace",
                password_hash=hash_password("bench-password-123"),
            )
            session.add_all([admin, developer])
            await session.flush()
            issued = await admin_api.state.id_tokens.issue(
                session, user_id=admin.id, email=admin.email
            )
        headers = {"Authorization": f"Bearer {issued.token}"}
        workers = build_workers(settings, database=database, clock=clock)
        assert workers is not None
        workers.start()
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        try:
            async with (
                remote_side(remote_url, root / "remote") as remote,
                httpx.AsyncClient(
                    transport=transport, base_url=f"http://testserver{PREFIX}", headers=headers
                ) as client,
                httpx.AsyncClient(
                    base_url=remote.gateway_url, headers={"Host": HOST}, timeout=10
                ) as traffic,
            ):
                made = await client.post("/gateways/connections", json=remote.connection_body())
                assert made.status_code == 201, made.text
                node = await published_node(
                    database,
                    bundle=Bundle.APIS,
                    title="orders",
                    connection_id=uuid.UUID(made.json()["data"]["id"]),
                    remote_id=remote.api_id,
                )
                admitted, activated, refused = [], [], []
                approve_calls, revoke_calls = [], []
                for round_ in range(ROUNDS + 1):  # the first one warms up
                    app_id, key = await developer_app(
                        database, settings, developer.id, f"app {round_}"
                    )
                    sub = await request_subscription(database, developer.id, app_id, node)

                    async def ok(key: str = key) -> bool:
                        return (await traffic.get("/orders", headers={"apikey": key})).is_success

                    async def no(key: str = key) -> bool:
                        answer = await traffic.get("/orders", headers={"apikey": key})
                        return answer.status_code in (401, 403)

                    async def active(sub: uuid.UUID = sub) -> bool:
                        shown = await client.get(f"/subscriptions/{sub}")
                        return bool(shown.json()["data"]["status"] == "active")

                    start = time.perf_counter()
                    answer = await client.post(f"/subscriptions/{sub}/approve")
                    assert answer.status_code == 200, answer.text
                    approve_call = time.perf_counter() - start
                    to_active = await until(active)
                    to_admit = to_active + await until(ok)
                    start = time.perf_counter()
                    answer = await client.post(
                        f"/subscriptions/{sub}/revoke", json={"reason": "bench"}
                    )
                    assert answer.status_code == 200, answer.text
                    revoke_call = time.perf_counter() - start
                    to_refuse = await until(no)
                    if round_:
                        admitted.append(to_admit)
                        activated.append(to_active)
                        refused.append(to_refuse)
                        approve_calls.append(approve_call)
                        revoke_calls.append(revoke_call)
                print(f"subscriptions: {ROUNDS} rounds, one management service, one gateway")
                print(line("approve call", approve_calls))
                print(line("approval → active (portal)", activated))
                print(line("approval → first 200", admitted))
                print(line("revoke call", revoke_calls))
                print(line("revocation → first 401/403", refused))
        finally:
            await workers.stop()
            await database.dispose()


if __name__ == "__main__":
    asyncio.run(main())
