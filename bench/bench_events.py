"""Audit events of the marketplace admin API at 100,000 events (and 1,000,000 for the export).
SQLite built from the migrations in a temp dir, in-process. Printed, never asserted.

* ``GET /events`` p50/p99 over httpx/ASGI: the first page, a deep page (offset ~50,000) and a
  filtered query (operation + time range);
* ``GET /events/export`` (NDJSON and CSV): events/s and the process's memory while streaming.
  The export is driven by calling the ASGI app directly with a ``send`` that counts and drops
  the body: httpx's ASGI transport buffers a whole response, which would measure the client.
  Peak RSS is VmHWM after resetting it (``/proc/self/clear_refs``) just before the export;
  constant memory means the growth is the same for 100,000 and 1,000,000 events.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from pydantic import SecretStr
from sqlalchemy import insert, text
from starlette.routing import Mount

from portico.app import create_app
from portico.core.account import User
from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.core.db.migrate import upgrade_async
from portico.core.passwords import hash_password
from portico.core.settings import Settings
from portico.marketplace.app import PREFIX

EVENTS = 100_000
MILLION = 1_000_000
BATCH = 10_000
REQUESTS = 200
#: the million-event export runs only if the estimate (insert + export) is under this
BUDGET_SECONDS = 120.0

OPERATIONS = [f"{entity}.{verb}" for entity in ("user", "role", "node", "subscription")
              for verb in ("create", "update", "delete", "approve", "block")]  # fmt: skip
ENTITIES = ("user", "role", "node", "subscription", "job", "notification")
ACTORS = [(uuid.uuid4(), f"admin{i}@example.com") for i in range(50)]
START = datetime(2025, 1, 1, tzinfo=UTC)


def events(count: int, *, offset: int, rng: random.Random) -> Iterator[list[dict[str, Any]]]:
    """Rows in batches, varied columns, over a 90-day window in the order they happened (an
    audit log is appended to as things happen, so its rows lie on disk in time order)."""
    step = 90 * 86400 / count
    for first in range(0, count, BATCH):
        batch = []
        for n in range(first, min(first + BATCH, count)):
            actor_id, email = ACTORS[n % len(ACTORS)]
            operation = rng.choice(OPERATIONS)
            batch.append(
                {
                    "id": uuid.uuid4(),
                    "occurred_at": START + timedelta(seconds=n * step + rng.random()),
                    "surface": "marketplace",
                    "actor_id": actor_id,
                    "actor_email": email,
                    "actor_kind": "user",
                    "action": operation,
                    "entity_type": operation.split(".")[0],
                    "entity_id": str(offset + n),
                    "bundle": "apis" if operation.startswith("node") else None,
                    "module": rng.choice(ENTITIES),
                    "summary": f"{operation} #{offset + n}, by {email}",
                    "before": {"status": "pending", "n": n},
                    "after": {"status": "active", "n": n, "note": "=1+1"},
                    "request_id": uuid.uuid4().hex,
                    "ip": "198.51.100.7",
                }
            )
        yield batch


async def insert_events(database: Database, count: int, *, offset: int) -> float:
    rng = random.Random(offset)
    started = time.perf_counter()
    for batch in events(count, offset=offset, rng=rng):
        async with database.session() as session, session.begin():
            await session.execute(insert(AuditEntry), batch)
    return time.perf_counter() - started


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


async def percentiles(
    http: httpx.AsyncClient, path: str, headers: dict[str, str], requests: int = REQUESTS
) -> str:
    (await http.get(path, headers=headers)).raise_for_status()  # warm
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = await http.get(path, headers=headers)
        times.append(time.perf_counter() - started)
        response.raise_for_status()
    times.sort()
    p50 = statistics.median(times) * 1000
    p99 = times[max(0, round(len(times) * 0.99) - 1)] * 1000
    return f"p50 {p50:7.1f} ms   p99 {p99:7.1f} ms   ({requests} requests)"


async def export(app: Any, query: str, token: str) -> tuple[float, int, int, int, int]:
    """Stream one export through the ASGI app: seconds, bytes, lines, RSS before and peak RSS
    while streaming (KiB)."""
    path = f"{PREFIX}/events/export"
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"bench"), (b"authorization", f"Bearer {token}".encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("bench", 80),
    }
    sent = False
    never = asyncio.Event()
    counted = {"bytes": 0, "lines": 0, "status": 0}

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await never.wait()  # the client stays connected
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            counted["status"] = message["status"]
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            counted["bytes"] += len(body)
            counted["lines"] += body.count(b"\n")

    before = status_kib("VmRSS")
    if not reset_peak():
        print("  (cannot reset VmHWM: the peak below includes the earlier phases)")
    started = time.perf_counter()
    await app(scope, receive, send)
    seconds = time.perf_counter() - started
    assert counted["status"] == 200, counted
    return seconds, counted["bytes"], counted["lines"], before, status_kib("VmHWM")


async def report_export(app: Any, count: int, token: str, formats: tuple[str, ...]) -> float:
    rate = 0.0
    for fmt in formats:
        seconds, size, lines, before, peak = await export(app, f"format={fmt}", token)
        rate = count / seconds
        print(
            f"  {count:>9,} events {fmt:<6} {seconds:6.1f} s {rate:8,.0f} events/s "
            f"{size / 1e6:6.1f} MB ({lines:,} lines)   RSS before {before / 1024:.1f} MiB, "
            f"peak while streaming {peak / 1024:.1f} MiB (+{(peak - before) / 1024:.1f})"
        )
    return rate


async def grow(database: Database, copies: int) -> float:
    """Make the log ``copies + 1`` times larger by copying the generated events into earlier
    90-day windows with fresh ids, in SQL: generating a million rows in Python would take
    longer than exporting them."""
    started = time.perf_counter()
    for copy in range(1, copies + 1):
        async with database.session() as session, session.begin():
            await session.execute(
                text(
                    "INSERT INTO audit_log (id, occurred_at, surface, org_id, actor_id, "
                    "actor_email, actor_kind, action, entity_type, entity_id, bundle, module, "
                    "summary, before, after, request_id, ip) "
                    "SELECT lower(hex(randomblob(16))), "
                    "strftime('%Y-%m-%d %H:%M:%S', occurred_at, :shift) "
                    "|| substr(occurred_at, 20), "
                    "surface, org_id, actor_id, actor_email, actor_kind, action, entity_type, "
                    "entity_id, bundle, module, summary, before, after, request_id, ip "
                    "FROM audit_log WHERE occurred_at >= :start"
                ),
                {"shift": f"-{90 * copy} days", "start": "2025-01-01"},
            )
    return time.perf_counter() - started


async def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="portico-bench-events-"))
    try:
        await run(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


async def run(workdir: Path) -> None:
    url = f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
    await upgrade_async(url)
    settings = Settings(
        environment="test",
        data_dir=workdir,
        database_url=url,
        secret_key=SecretStr("bench-secret-0123456789abcdef0123456789"),
        log_format="text",
        _env_file=None,
    )
    database = Database(url)
    app = create_app(settings, database=database)
    admin_api = next(r.app for r in app.routes if isinstance(r, Mount) and r.path == PREFIX)
    assert isinstance(admin_api, FastAPI)
    async with database.session() as session, session.begin():
        user = User(
            id=uuid.uuid4(),
            email="root@example.com",
            password_hash=hash_password("x" * 12),
            is_platform_admin=True,
        )
        session.add(user)
        await session.flush()
        issued = await admin_api.state.id_tokens.issue(session, user_id=user.id, email=user.email)
    headers = {"Authorization": f"Bearer {issued.token}"}

    seconds = await insert_events(database, EVENTS, offset=0)
    print(f"inserted {EVENTS:,} events in {seconds:.1f} s ({EVENTS / seconds:,.0f}/s, bulk)")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://b", timeout=120) as http:
        base = f"{PREFIX}/events"
        deep = EVENTS // 2 // 50
        filtered = (
            f"{base}?filter[operation]=user.approve&filter[from]=2025-02-01T00:00:00Z"
            "&filter[to]=2025-02-15T00:00:00Z"
        )
        cases = (
            ("first page", base, REQUESTS),
            (f"page {deep} (offset {(deep - 1) * 50:,})", f"{base}?page={deep}", 50),
            ("filtered (operation + range)", filtered, REQUESTS),
            (
                "one event",
                f"{base}/{(await http.get(base, headers=headers)).json()['data'][0]['id']}",
                REQUESTS,
            ),
            ("stats, unfiltered", f"{base}/stats", 20),
        )
        print(f"GET /events at {EVENTS:,} events (limit 50, in-process over ASGI):")
        for label, path, requests in cases:
            print(f"  {label:<30} {await percentiles(http, path, headers, requests)}")

    print(f"GET /events/export, streamed (process RSS {status_kib('VmRSS') / 1024:.1f} MiB):")
    rate = await report_export(app, EVENTS, issued.token, ("ndjson", "csv"))
    copies = MILLION // EVENTS - 1
    estimate = copies * 2.0 + MILLION / rate  # ~2 s per 100,000 copied rows
    if "--no-million" in sys.argv or estimate > BUDGET_SECONDS:
        print(
            f"  {MILLION:>9,} events skipped (estimated {estimate:.0f} s > {BUDGET_SECONDS:.0f} s)"
        )
    else:
        added = await grow(database, copies)
        print(f"  (copied the log to {MILLION:,} events in {added:.1f} s)")
        await report_export(app, MILLION, issued.token, ("ndjson",))
    await database.dispose()


if __name__ == "__main__":
    asyncio.run(main())
