"""Analytics over 10 million requests: grouped queries over 24 hours, and ingest.

Writes the rollups of ``BENCH_RECORDS`` (10,000,000) requests spread over 24 hours (busier by
day than by night) straight into a migrated SQLite file and a migrated PostgreSQL database
(a throwaway cluster, as the tests start): 3 environments (80/15/5 % of the traffic), 6 APIs
of 2 routes each (Zipf-weighted), 6 apps per environment (Zipf-weighted, 3 developers, two
products) and 10 % unauthenticated traffic, 6 status codes (85 % 200): 1,512 possible keys,
about a thousand of them seen in any one minute. Each request gets a
log-normal latency around its route's median and a log-normal response size, folded into
per-minute rollups and into hourly ones exactly as ingest merges them (sketches included).

Then compacts the day's closed hours as ``portico serve``'s worker does (timed per hour), and
times queries through the service layer (``analytics.service.run``: SQL, merging,
aggregation, sort): cold ``BENCH_COLD_ROUNDS`` times (the merged-hours cache emptied before
each) and warm ``BENCH_ROUNDS`` times, and prints p50 and worst/p99 against the 200 ms
target. Last, ingest: node-sized batches (what one node at 50,000 requests/s folds in
5 seconds) through ``telemetry.service.ingest`` (validation included), as rollup rows/s and
the requests/s they stand for. Printed, never asserted.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support.pgcluster

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.db.migrate import upgrade_async
from portico.gateway.telemetry.rollups import Batch, Rollup
from portico.management.analytics import compaction, hour_cache
from portico.management.analytics import service as analytics_service
from portico.management.analytics.repository import Condition
from portico.management.environment.models import Environment
from portico.management.telemetry import service as telemetry_service
from portico.management.telemetry import sketch as sketches
from portico.management.telemetry.models import (
    TelemetryHourlyRollup,
    TelemetryHourlySketch,
    TelemetryRollup,
)
from portico.management.telemetry.repository import sketch_rows
from portico.management.telemetry.schemas import TelemetryBatch
from tests.support.pgcluster import PostgresCluster

RECORDS = int(os.environ.get("BENCH_RECORDS", "10000000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "30"))
COLD_ROUNDS = int(os.environ.get("BENCH_COLD_ROUNDS", "5"))
TARGET_MS = 200.0
DAY = datetime(2026, 3, 1, tzinfo=UTC)
ORG = uuid.UUID("0b5e7c1e-0000-4000-8000-000000000001")
ENVS = [("prod", 0.80), ("staging", 0.15), ("dev", 0.05)]
ENV_IDS = [uuid.UUID(f"0b5e7c1e-0000-4000-8000-00000000010{i}") for i in range(len(ENVS))]
STATUSES = [(200, 0.85), (201, 0.05), (400, 0.03), (401, 0.03), (404, 0.03), (500, 0.01)]
APIS = ["orders", "users", "catalog", "payments", "search", "media"]
APPS_PER_ENV = 6
ZIPF_APPS = sum(1 / k for k in range(1, APPS_PER_ENV + 1))
COLUMNS = [c.name for c in TelemetryRollup.__table__.columns]
HOUR_COLUMNS = [c.name for c in TelemetryHourlyRollup.__table__.columns]
SKETCH_COLUMNS = [c.name for c in TelemetryHourlySketch.__table__.columns]


@dataclass(frozen=True)
class Route:
    api_id: str
    api_name: str
    route_id: str
    name: str
    uri: str
    upstream_path: str
    method: str
    latency_ms: float  # median
    response_bytes: float  # median
    request_bytes: int


def routes() -> list[Route]:
    out = []
    for a, api_name in enumerate(APIS):
        for r, (suffix, method, request) in enumerate([("/{id}", "GET", 0), ("", "POST", 600)]):
            out.append(
                Route(
                    api_id=str(uuid.UUID(int=1000 + a)),
                    api_name=api_name,
                    route_id=f"rev-{a}:{r}",
                    name=f"{method.lower()} {api_name}{suffix}",
                    uri=f"/{api_name}{suffix}",
                    upstream_path=f"/v2/{api_name}{suffix}",
                    method=method,
                    latency_ms=8.0 * (1.6**a) * (1.0 + r),
                    response_bytes=400.0 * (1 + a) * (3 - r),
                    request_bytes=request,
                )
            )
    return out


@dataclass(frozen=True)
class App:
    app_id: str
    name: str
    consumer: str
    developer_id: str
    developer_email: str
    product_id: str
    product_name: str


def apps(env: int) -> list[App | None]:
    out: list[App | None] = [None]  # unauthenticated
    for i in range(APPS_PER_ENV):
        developer = i // 2
        product = i % 2
        out.append(
            App(
                app_id=str(uuid.UUID(int=env * 100 + i + 1)),
                name=f"app-{ENVS[env][0]}-{i}",
                consumer=f"consumer-{ENVS[env][0]}-{i}",
                developer_id=str(uuid.UUID(int=5000 + developer)),
                developer_email=f"dev{developer}@example.com",
                product_id=str(uuid.UUID(int=9000 + product)),
                product_name=["gold", "silver"][product],
            )
        )
    return out


def universe() -> tuple[list[tuple[int, Route, App | None, int]], list[float]]:
    keys: list[tuple[int, Route, App | None, int]] = []
    weights: list[float] = []
    all_routes = routes()
    for e, (_, env_weight) in enumerate(ENVS):
        env_apps = apps(e)
        for r, route in enumerate(all_routes):
            for a, app in enumerate(env_apps):
                app_weight = (
                    0.10 if app is None else 0.9 * (1 / a) / sum(1 / k for k in range(1, 11))
                )
                for status, status_weight in STATUSES:
                    keys.append((e, route, app, status))
                    weights.append(env_weight * (1 / (r + 1)) * app_weight * status_weight)
    return keys, weights


def minute_row(
    env: int, minute: datetime, route: Route, app: App | None, status: int, count: int
) -> dict[str, Any]:
    refused = status in (401, 429)
    rollup = Rollup()
    mu = math.log(route.latency_ms)
    size_mu = math.log(route.response_bytes)
    for _ in range(count):
        if refused:
            latency = random.uniform(0.2, 2.0)
            rollup.add(latency, -1.0, route.request_bytes, 60)
        else:
            latency = random.lognormvariate(mu, 0.6)
            response = int(random.lognormvariate(size_mu, 0.8))
            rollup.add(latency, latency * 0.9, route.request_bytes, response)
    row: dict[str, Any] = {
        "environment_id": ENV_IDS[env],
        "minute": minute,
        "org_id": ORG,
        "api_id": route.api_id,
        "route_id": route.route_id,
        "consumer": app.consumer if app else "",
        "method": route.method,
        "status": status,
        "app_id": app.app_id if app else "",
        "product_id": app.product_id if app else "",
        "developer_id": app.developer_id if app else "",
        "env_name": ENVS[env][0],
        "api_name": route.api_name,
        "route_name": route.name,
        "api_path": route.uri,
        "upstream_path": route.upstream_path,
        "app_name": app.name if app else "",
        "developer_email": app.developer_email if app else "",
        "product_name": app.product_name if app else "",
    }
    for name in (
        "requests",
        "latency_ms_sum",
        "latency_ms_min",
        "latency_ms_max",
        "upstream_requests",
        "upstream_ms_sum",
        "upstream_ms_min",
        "upstream_ms_max",
        "request_bytes",
        "request_bytes_min",
        "request_bytes_max",
        "response_bytes",
        "response_bytes_min",
        "response_bytes_max",
        "transfer_bytes_min",
        "transfer_bytes_max",
    ):
        row[name] = getattr(rollup, name)
    for name in ("latency", "upstream", "request", "response", "transfer"):
        row[f"{name}_sketch"] = dict(getattr(rollup, f"{name}_sketch"))
    return row


def encoded(row: dict[str, Any], packed: bool) -> dict[str, Any]:
    out = dict(row)
    for name in ("latency", "upstream", "request", "response", "transfer"):
        out[f"{name}_sketch"] = sketches.encode(row[f"{name}_sketch"], packed=packed)
    return out


def sqlite_value(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return value.hex
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")
    return value


class Writers:
    """Rows into the SQLite file (sqlite3) and PostgreSQL (COPY through asyncpg)."""

    def __init__(self, sqlite_path: Path, pg_dsn: str) -> None:
        self.sqlite = sqlite3.connect(sqlite_path)
        self.sqlite.execute("PRAGMA synchronous=OFF")
        self.pg_dsn = pg_dsn
        self.pg: Any = None

    async def open(self) -> None:
        import asyncpg

        self.pg = await asyncpg.connect(self.pg_dsn)

    async def write(self, table: str, rows: list[dict[str, Any]]) -> None:
        """``rows`` keyed by the minute tier's columns (``minute`` holds the hour's start in
        hourly rows, whose sketches go to their own table as the repository writes them)."""
        if table.endswith("hourly"):
            hours = [{**row, "hour": row["minute"]} for row in rows]
            await self.insert(table, HOUR_COLUMNS, [[r[c] for c in HOUR_COLUMNS] for r in hours])
            stored = sketch_rows(hours)
            await self.insert(
                "telemetry_sketches_hourly",
                SKETCH_COLUMNS,
                [[r[c] for c in SKETCH_COLUMNS] for r in stored],
            )
            return
        await self.insert(table, COLUMNS, [[row[c] for c in COLUMNS] for row in rows])

    async def insert(self, table: str, names: list[str], values: list[list[Any]]) -> None:
        marks = ",".join("?" * len(names))
        self.sqlite.executemany(
            f"INSERT INTO {table} ({','.join(names)}) VALUES ({marks})",  # noqa: S608 (ours)
            [[sqlite_value(v) for v in value] for value in values],
        )
        self.sqlite.commit()
        await self.pg.copy_records_to_table(table, records=values, columns=names)

    async def finish(self) -> None:
        self.sqlite.execute("ANALYZE")
        self.sqlite.close()
        await self.pg.execute("VACUUM ANALYZE")
        await self.pg.close()


async def load(writers: Writers) -> tuple[int, int]:
    random.seed(15)
    keys, weights = universe()
    cumulative = []
    running = 0.0
    for weight in weights:
        running += weight
        cumulative.append(running)
    shares = [1.0 + 0.6 * math.sin((m / 1440 - 0.3) * 2 * math.pi) for m in range(1440)]
    scale = RECORDS / sum(shares)
    per_minute = [int(s * scale) for s in shares]
    per_minute[0] += RECORDS - sum(per_minute)
    minute_rows = hour_rows = 0
    for hour in range(24):
        started = time.perf_counter()
        hourly: dict[tuple[Any, ...], dict[str, Any]] = {}
        rows: list[dict[str, Any]] = []
        for m in range(60):
            index = hour * 60 + m
            moment = DAY + timedelta(minutes=index)
            drawn = Counter(
                random.choices(range(len(keys)), cum_weights=cumulative, k=per_minute[index])
            )
            for key_index, count in drawn.items():
                env, route, app, status = keys[key_index]
                row = minute_row(env, moment, route, app, status, count)
                rows.append(encoded(row, packed=False))
                hour_key = (key_index,)
                known = hourly.get(hour_key)
                if known is None:
                    hourly[hour_key] = {**row, "minute": DAY + timedelta(hours=hour)}
                else:
                    telemetry_service.merge_rows(known, row)
        await writers.write("telemetry_rollups", rows)
        await writers.write(
            "telemetry_rollups_hourly", [encoded(r, packed=True) for r in hourly.values()]
        )
        minute_rows += len(rows)
        hour_rows += len(hourly)
        print(
            f"  hour {hour:2d}: {len(rows):6d} minute rows, {len(hourly):5d} hour rows "
            f"({time.perf_counter() - started:.1f} s)",
            flush=True,
        )
    await writers.finish()
    return minute_rows, hour_rows


QUERIES: list[tuple[str, dict[str, Any]]] = [
    (
        "requests-count by api_name, 24 h aligned",
        {"metric": "requests-count", "dimensions": ("api_name",), "aligned": True},
    ),
    (
        "requests-count by api_name",
        {"metric": "requests-count", "dimensions": ("api_name",)},
    ),
    (
        "response-time AVG by app_name",
        {"metric": "response-time", "aggregation": "AVG", "dimensions": ("app_name",)},
    ),
    (
        "requests-per-second by env_name, status",
        {"metric": "requests-per-second", "dimensions": ("env_name", "response_status_code")},
    ),
    (
        "requests-count series by hour, env_name",
        {"metric": "requests-count", "dimensions": ("env_name",), "time_unit": "hour"},
    ),
    (
        "response-time P95 by api_name",
        {"metric": "response-time", "aggregation": "P95", "dimensions": ("api_name",)},
    ),
    (
        "response-time P99 by route_name, env prod",
        {
            "metric": "response-time",
            "aggregation": "P99",
            "dimensions": ("route_name",),
            "filter": ("env_name", "EQ", ("prod",)),
        },
    ),
    (
        "response-size P50 by app_name",
        {"metric": "response-size", "aggregation": "P50", "dimensions": ("app_name",)},
    ),
]


def plan(spec: dict[str, Any]) -> analytics_service.Plan:
    """24 hours from midnight (hourly rows only), or from 00:17 (ragged edges: 43 minutes
    and 17 minutes of minute rows besides 23 hours)."""
    start = DAY if spec.get("aligned") else DAY + timedelta(minutes=17)
    conditions: tuple[Condition, ...] = ()
    if "filter" in spec:
        column, operator, values = spec["filter"]
        conditions = (Condition(column, operator, values),)
    series = spec.get("time_unit")
    return analytics_service.Plan(
        metric=spec["metric"],
        aggregation=spec.get("aggregation", "AVG"),
        dimensions=spec.get("dimensions", ()),
        conditions=conditions,
        start=start,
        end=start + timedelta(hours=24),
        time_unit=series,
        page=1,
        size=100,
        sort_field="timeBucket" if series else "value",
        sort_order="ASC" if series else "DESC",
    )


async def time_queries(url: str, label: str) -> list[float]:
    """Each query cold (the merged-hours cache emptied before each of ``COLD_ROUNDS`` runs:
    a first look at a day, its closed hours compacted) and warm (``ROUNDS`` runs after two:
    a dashboard asking again, the closed hours reused). Returns the warm p99s and the cold
    worsts, query by query."""
    database = Database(url)
    caller: Any = SimpleNamespace(org_id=ORG)
    worst: list[float] = []
    print(
        f"\n{label}: cold p50 / max over {COLD_ROUNDS} runs, warm p50 / p99 over {ROUNDS} "
        f"(target p99 <= {TARGET_MS:.0f} ms)"
    )

    async def once(spec: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        started = time.perf_counter()
        async with database.session() as session:
            result = await analytics_service.run(session=session, caller=caller, plan=plan(spec))
        return (time.perf_counter() - started) * 1000, result

    try:
        for name, spec in QUERIES:
            cold = []
            for _ in range(COLD_ROUNDS):
                hour_cache.CACHE.clear()
                cold.append((await once(spec))[0])
            warm = []
            result: dict[str, Any] = {}
            for round_ in range(ROUNDS + 2):
                elapsed, result = await once(spec)
                if round_ >= 2:  # two warm-up runs
                    warm.append(elapsed)
            ordered = sorted(warm)
            p99 = ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]
            worst += [p99, max(cold)]
            print(
                f"  {name:<44} cold {statistics.median(cold):6.1f} / {max(cold):6.1f} ms"
                f"   warm {statistics.median(ordered):6.1f} / {p99:6.1f} ms"
                f"   warm p99/target {p99 / TARGET_MS:4.2f}   ({result['meta']['total']} rows, "
                f"value {result['value']})"
            )
    finally:
        await database.dispose()
    return worst


async def ingest(url: str, label: str) -> None:
    """Node-sized batches: 5 s of one node at 50,000 requests/s, folded by the node."""
    random.seed(7)
    database = Database(url)
    keys, weights = universe()
    per_batch = 250_000
    batches = 4
    env_index = 0
    env_keys = [i for i, k in enumerate(keys) if k[0] == env_index]
    env_weights = [weights[i] for i in env_keys]
    clock = Clock()
    total_rows = 0
    total_records = 0
    elapsed = 0.0
    try:
        async with database.session() as session:
            env = await session.get(Environment, ENV_IDS[env_index])
        assert env is not None
        for b in range(batches):
            minute = int((DAY + timedelta(days=2, minutes=b)).timestamp())
            rollups: dict[Any, Rollup] = {}
            drawn = Counter(random.choices(env_keys, weights=env_weights, k=per_batch))
            for key_index, count in drawn.items():
                _, route, app, status = keys[key_index]
                key = (
                    str(ENV_IDS[env_index]),
                    minute,
                    route.api_id,
                    route.route_id,
                    app.consumer if app else "",
                    route.method,
                    status,
                    app.app_id if app else "",
                    app.product_id if app else "",
                    app.developer_id if app else "",
                )
                rollup = rollups[key] = Rollup(
                    (
                        route.api_name,
                        route.name,
                        route.uri,
                        route.upstream_path,
                        app.name if app else "",
                        app.developer_email if app else "",
                        app.product_name if app else "",
                    )
                )
                for _ in range(count):
                    latency = random.lognormvariate(math.log(route.latency_ms), 0.6)
                    rollup.add(latency, latency * 0.9, route.request_bytes, 700)
            document = {
                "nodeId": "bench",
                "environmentId": str(ENV_IDS[env_index]),
                "rollups": Batch(rollups, {}).documents(str(ENV_IDS[env_index])),
            }
            started = time.perf_counter()
            body = TelemetryBatch.model_validate(document)
            async with database.session() as session, session.begin():
                await telemetry_service.ingest(session=session, env=env, batch=body, clock=clock)
            elapsed += time.perf_counter() - started
            total_rows += len(rollups)
            total_records += per_batch
    finally:
        await database.dispose()
    print(
        f"\n{label} ingest: {batches} batches of {total_rows // batches} rollups "
        f"({per_batch} requests each): {total_rows / elapsed:,.0f} rollup rows/s = "
        f"{total_records / elapsed:,.0f} requests/s "
        f"({total_records / elapsed / 50_000:.1f}x the 50,000 requests/s target; "
        f"{elapsed / batches * 1000:.0f} ms per 5-second batch)"
    )


async def compact(url: str, label: str) -> None:
    """What ``portico serve``'s compaction has done by the time the day is queried: each
    closed hour merged per route and app (``analytics.compaction``), timed per hour."""
    database = Database(url)
    now = DAY + timedelta(hours=24) + compaction.SETTLE
    try:
        async with database.session() as session:
            due = await compaction.due_hours(session, now=now, lookback=timedelta(hours=25))
        times = []
        rows = 0
        for org_id, hour, _ in due:
            started = time.perf_counter()
            rows += await compaction.compact_hour(database, org_id, hour, now=now)
            times.append(time.perf_counter() - started)
    finally:
        await database.dispose()
    print(
        f"\n{label} compaction: {len(times)} hours, {rows:,} route rows, "
        f"{statistics.median(times):.2f} s per hour (max {max(times):.2f} s), in the worker"
    )


async def setup(url: str) -> None:
    await upgrade_async(url)
    database = Database(url)
    try:
        async with database.session() as session, session.begin():
            from portico.management.org.models import Organization

            session.add(Organization(id=ORG, name="bench", description=""))
            await session.flush()
            for env_id, (name, _) in zip(ENV_IDS, ENVS, strict=True):
                session.add(Environment(id=env_id, org_id=ORG, name=name, description=""))
    finally:
        await database.dispose()


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, PostgresCluster(Path(tmp)) as cluster:
        sqlite_path = Path(tmp) / "analytics.db"
        sqlite_url = f"sqlite+aiosqlite:///{sqlite_path}"
        cluster.create_database("analytics")
        pg_url = cluster.url("analytics")
        await setup(sqlite_url)
        await setup(pg_url)
        writers = Writers(sqlite_path, cluster.url("analytics", driver="postgresql"))
        await writers.open()
        print(f"loading {RECORDS:,} requests over 24 h into SQLite and PostgreSQL")
        started = time.perf_counter()
        minute_rows, hour_rows = await load(writers)
        print(
            f"  {minute_rows:,} minute rows, {hour_rows:,} hour rows "
            f"({RECORDS / minute_rows:.1f} requests per minute row), "
            f"{time.perf_counter() - started:.0f} s; SQLite file "
            f"{sqlite_path.stat().st_size / 1e6:,.0f} MB"
        )
        await compact(sqlite_url, "SQLite")
        await compact(pg_url, "PostgreSQL")
        sqlite_times = await time_queries(sqlite_url, "SQLite")
        pg_times = await time_queries(pg_url, "PostgreSQL")
        await ingest(sqlite_url, "SQLite")
        await ingest(pg_url, "PostgreSQL")
        print(
            f"\nworst warm p99 / cold run: SQLite {max(sqlite_times[0::2]):.1f} / "
            f"{max(sqlite_times[1::2]):.1f} ms, PostgreSQL {max(pg_times[0::2]):.1f} / "
            f"{max(pg_times[1::2]):.1f} ms (target {TARGET_MS:.0f} ms)"
        )


if __name__ == "__main__":
    asyncio.run(main())
