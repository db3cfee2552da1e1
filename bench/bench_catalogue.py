"""``GET /apis`` at 100,000 API nodes, on SQLite and PostgreSQL: every documented filter with
every sort, and late pages; p50/p99 per case against the 50 ms target. Printed, never asserted.

Each store is migrated (a SQLite file in a temp dir; a throwaway PostgreSQL cluster, as the
tests start one), then ``BENCH_NODES`` (100,000) API nodes and 10,000 product nodes are
written with SQL core inserts in the order they were created (two years, newest last), with
varied columns: 25 organisations (20 % of nodes own none), 5 gateway connections (30 %
imported), moderation states (50 % published, 25 % draft, 5 % in review, 20 % archived),
visibility (60 % public, 30 % internal, 10 % organisation) and titles of two words from 40
each and a number. Then ``ANALYZE`` (SQLite) and ``VACUUM ANALYZE`` (PostgreSQL), what either
store's own maintenance (``PRAGMA optimize``, autovacuum) does after a bulk load.

Requests go through the whole control-plane app in-process (httpx over ASGI: token check,
permissions, query parsing, the three queries, JSON), ``BENCH_REQUESTS`` (100) per case after
one warm-up, limit 50. Cases: no filter and each filter (``source`` custom/imported/one
connection, ``moderation_state``, ``visibility``, ``organisation``, ``published``,
``title``, ``search`` common/rare/absent) × each sort ascending and descending; then the
last page of each sort unfiltered (offset 99,950) and of each filter.

Each case also says what the collector did during its requests (full collections, the
longest pause): a p99 is the second worst of 100 requests, and one full collection inside a
request can make it.

``BENCH_CASES=search`` keeps the cases whose label contains the text; ``BENCH_STORES=sqlite``
measures one store.
"""

from __future__ import annotations

import asyncio
import gc
import math
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import httpx
from fastapi import FastAPI
from pydantic import SecretStr
from sqlalchemy import insert, text
from starlette.routing import Mount

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support.pgcluster

from portico.app import create_app
from portico.core.account import User
from portico.core.db.engine import Database
from portico.core.db.migrate import upgrade_async
from portico.core.passwords import hash_password
from portico.core.settings import Settings
from portico.marketplace.app import PREFIX
from portico.marketplace.connection.models import ConnectionStatus, GatewayConnection
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    SourceType,
    Visibility,
)
from portico.marketplace.organisation.models import Organisation
from portico.runner import SERVE_YOUNG_COLLECTION, settle_heap
from tests.support.pgcluster import PostgresCluster

NODES = int(os.environ.get("BENCH_NODES", "100000"))
PRODUCTS = NODES // 10
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "100"))
#: only the cases whose label contains this (e.g. "search"), to look at a few again
ONLY = os.environ.get("BENCH_CASES", "")
#: the stores to measure, by dialect ("sqlite,postgresql")
STORES = set(os.environ.get("BENCH_STORES", "sqlite,postgresql").split(","))
LIMIT = 50
TARGET_MS = 50.0
BATCH = 5_000
START = datetime(2024, 1, 1, tzinfo=UTC)
SPAN = timedelta(days=730)

ADJECTIVES = [
    "Agile",
    "Bold",
    "Brisk",
    "Calm",
    "Clever",
    "Crisp",
    "Daring",
    "Eager",
    "Fair",
    "Fast",
    "Gentle",
    "Grand",
    "Happy",
    "Honest",
    "Jolly",
    "Keen",
    "Kind",
    "Lively",
    "Loyal",
    "Lucky",
    "Merry",
    "Mighty",
    "Neat",
    "Noble",
    "Proud",
    "Quick",
    "Quiet",
    "Rapid",
    "Ready",
    "Royal",
    "Sharp",
    "Shiny",
    "Smart",
    "Solid",
    "Steady",
    "Sunny",
    "Swift",
    "Tidy",
    "Vivid",
    "Witty",
]
NOUNS = [
    "Orders",
    "Payments",
    "Invoices",
    "Accounts",
    "Shipments",
    "Customers",
    "Products",
    "Catalog",
    "Pricing",
    "Ledger",
    "Reports",
    "Tickets",
    "Messages",
    "Alerts",
    "Profiles",
    "Sessions",
    "Tokens",
    "Search",
    "Reviews",
    "Ratings",
    "Coupons",
    "Carts",
    "Wallets",
    "Transfers",
    "Loans",
    "Claims",
    "Policies",
    "Quotes",
    "Bookings",
    "Flights",
    "Hotels",
    "Cars",
    "Weather",
    "Maps",
    "Routes",
    "Stops",
    "Events",
    "Venues",
    "Media",
    "Files",
]
STATES = [
    (ModerationState.PUBLISHED, 50),
    (ModerationState.DRAFT, 25),
    (ModerationState.IN_REVIEW, 5),
    (ModerationState.ARCHIVED, 20),
]
VISIBILITIES = [(Visibility.PUBLIC, 60), (Visibility.INTERNAL, 30), (Visibility.ORGANISATION, 10)]
T = TypeVar("T")
SORTS = ["title", "created_at", "updated_at", "moderation_state"]


def weighted(rng: random.Random, choices: list[tuple[T, int]]) -> T:
    return rng.choices([c for c, _ in choices], weights=[w for _, w in choices])[0]


@dataclass(frozen=True)
class World:
    organisations: list[uuid.UUID]
    connections: list[uuid.UUID]
    #: a title that exists, for filter[title]
    a_title: str


def nodes(world: World, rng: random.Random) -> Iterator[list[dict[str, Any]]]:
    """API nodes then product nodes, in batches, in the order they were created."""
    total = NODES + PRODUCTS
    bundles = [Bundle.APIS] * NODES + [Bundle.API_PRODUCTS] * PRODUCTS
    rng.shuffle(bundles)
    step = SPAN / total
    for first in range(0, total, BATCH):
        batch = []
        for n in range(first, min(first + BATCH, total)):
            created = START + step * n
            state = weighted(rng, STATES)
            imported = rng.random() < 0.3
            connection = rng.choice(world.connections) if imported else None
            batch.append(
                {
                    "id": uuid.uuid4(),
                    "bundle": bundles[n],
                    "title": f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} {n}",
                    "version": f"{rng.randint(1, 5)}.{rng.randint(0, 20)}",
                    "overview": "An API of the benchmark.",
                    "description": "",
                    "documentation": None,
                    "quota": None,
                    "organisation_id": (
                        rng.choice(world.organisations) if rng.random() < 0.8 else None
                    ),
                    "visibility": weighted(rng, VISIBILITIES),
                    "moderation_state": state,
                    "published": state is ModerationState.PUBLISHED,
                    "source_type": SourceType.IMPORTED if imported else SourceType.CUSTOM,
                    "connection_id": connection,
                    "remote_id": f"remote-{n}" if imported else None,
                    "remote_uuid": None,
                    "remote_revision": "1" if imported else None,
                    "gateway_type": None,
                    "created_by": None,
                    "created_at": created,
                    "updated_at": min(created + timedelta(days=rng.random() * 180), START + SPAN),
                }
            )
        yield batch


async def load(url: str, dialect: str) -> tuple[World, str, float]:
    """Migrate, write the nodes, gather statistics; the world and a platform admin's token."""
    await upgrade_async(url)
    database = Database(url)
    rng = random.Random(17)
    started = time.perf_counter()
    try:
        async with database.session() as session, session.begin():
            organisations = [
                Organisation(id=uuid.uuid4(), name=f"Org {i}", domains=[]) for i in range(25)
            ]
            connections = [
                GatewayConnection(
                    id=uuid.uuid4(),
                    name=f"gateway-{i}",
                    source="portico",
                    config={},
                    status=ConnectionStatus.CONNECTED,
                    last_checked=START,
                )
                for i in range(5)
            ]
            session.add_all([*organisations, *connections])
        world = World([o.id for o in organisations], [c.id for c in connections], "")
        a_title = ""
        for batch in nodes(world, rng):
            async with database.session() as session, session.begin():
                await session.execute(insert(CatalogueNode), batch)
            a_title = a_title or next(r["title"] for r in batch if r["bundle"] is Bundle.APIS)
        world = World(world.organisations, world.connections, a_title)
        if dialect == "sqlite":
            async with database.session() as session, session.begin():
                await session.execute(text("ANALYZE"))
        else:
            async with database.engine.connect() as connection:
                autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
                await autocommit.execute(text("VACUUM ANALYZE"))
        seconds = time.perf_counter() - started
    finally:
        await database.dispose()
    return world, url, seconds


async def token(database: Database, admin_api: FastAPI) -> str:
    async with database.session() as session, session.begin():
        user = User(
            id=uuid.uuid4(),
            email=f"root-{uuid.uuid4().hex[:6]}@example.com",
            password_hash=hash_password("x" * 12),
            is_platform_admin=True,
        )
        session.add(user)
        await session.flush()
        issued = await admin_api.state.id_tokens.issue(session, user_id=user.id, email=user.email)
    return issued.token


@dataclass
class Result:
    label: str
    p50: float
    p99: float
    count: int
    #: the collector's pauses during the case's requests: how many full (generation 2)
    #: collections, and the longest pause of any generation (ms)
    full_collections: int = 0
    longest_pause: float = 0.0

    @property
    def passed(self) -> bool:
        return self.p99 <= TARGET_MS


class GcPauses:
    """The collector's pauses (``gc.callbacks``), by generation: a case's p99 is its second
    worst request, and one full collection inside a request is enough to make it."""

    def __init__(self) -> None:
        self.started = 0.0
        self.pauses: list[tuple[int, float]] = []

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started = time.perf_counter()
        else:
            self.pauses.append((info["generation"], time.perf_counter() - self.started))

    def take(self) -> tuple[int, float]:
        """Full collections and the longest pause (ms) since the last call."""
        pauses, self.pauses = self.pauses, []
        full = sum(1 for generation, _ in pauses if generation == 2)
        return full, max((seconds for _, seconds in pauses), default=0.0) * 1000


PAUSES = GcPauses()


async def measure(
    http: httpx.AsyncClient, params: dict[str, str], headers: dict[str, str]
) -> tuple[float, float, int]:
    path = f"{PREFIX}/apis"
    first = await http.get(path, params=params, headers=headers)  # warm
    first.raise_for_status()
    PAUSES.take()
    times = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        response = await http.get(path, params=params, headers=headers)
        times.append(time.perf_counter() - started)
        response.raise_for_status()
    times.sort()
    p99 = times[max(0, math.ceil(len(times) * 0.99) - 1)]
    return statistics.median(times) * 1000, p99 * 1000, first.json()["meta"]["count"]


def filters(world: World) -> list[tuple[str, dict[str, str]]]:
    return [
        ("no filter", {}),
        ("source=custom", {"filter[source]": "custom"}),
        ("source=imported", {"filter[source]": "imported"}),
        ("source=<connection>", {"filter[source]": str(world.connections[0])}),
        ("moderation_state=in_review", {"filter[moderation_state]": "in_review"}),
        ("visibility=organisation", {"filter[visibility]": "organisation"}),
        ("organisation=<org>", {"filter[organisation]": str(world.organisations[0])}),
        ("published=true", {"filter[published]": "true"}),
        ("title=<exact>", {"filter[title]": world.a_title}),
        ("search=common word", {"filter[search]": "orders"}),
        ("search=rare", {"filter[search]": "7777"}),
        ("search=absent", {"filter[search]": "zzzz"}),
    ]


async def run(label: str, url: str, world: World, workdir: Path) -> list[Result]:
    settings = Settings(
        environment="test",
        data_dir=workdir,
        database_url=url,
        secret_key=SecretStr("bench-secret-0123456789abcdef0123456789"),
        log_format="text",
        log_level="WARNING",
        _env_file=None,  # type: ignore[call-arg]
    )
    database = Database(url)
    app = create_app(settings, database=database)
    admin_api = next(r.app for r in app.routes if isinstance(r, Mount) and r.path == PREFIX)
    assert isinstance(admin_api, FastAPI)
    headers = {"Authorization": f"Bearer {await token(database, admin_api)}"}
    # the collector as `portico serve` leaves it once started (runner.settle_heap): start-up
    # objects frozen, young collections rarer
    settle_heap(SERVE_YOUNG_COLLECTION)
    gc.callbacks.append(PAUSES)
    results: list[Result] = []

    def wanted(label: str) -> bool:
        return ONLY in label

    def report(result: Result) -> None:
        result.full_collections, result.longest_pause = PAUSES.take()
        results.append(result)
        verdict = "PASS" if result.passed else "FAIL"
        print(
            f"  {result.label:<50} p50 {result.p50:6.1f} ms  p99 {result.p99:6.1f} ms  "
            f"{verdict}  ({result.count:,} matching; GC: {result.full_collections} full, "
            f"longest pause {result.longest_pause:.1f} ms)",
            flush=True,
        )

    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://b", timeout=60) as http:
            print(f"\n{label}: GET /apis, limit {LIMIT}, {REQUESTS} requests per case")
            for name, params in filters(world):
                for sort in SORTS:
                    for key in (sort, f"-{sort}"):
                        if not wanted(f"{name}, sort={key}"):
                            continue
                        p50, p99, count = await measure(http, {**params, "sort": key}, headers)
                        report(Result(f"{name}, sort={key}", p50, p99, count))
            print(f"{label}: the last page")
            for sort in SORTS:
                for key in (sort, f"-{sort}"):
                    last = max(1, math.ceil(NODES / LIMIT))
                    if not wanted(f"no filter, sort={key}, page {last}"):
                        continue
                    params = {"sort": key, "page": str(last)}
                    p50, p99, count = await measure(http, params, headers)
                    report(Result(f"no filter, sort={key}, page {last}", p50, p99, count))
            for name, params in filters(world)[1:]:
                if not wanted(f"{name}, page"):
                    continue
                _, _, count = await measure_once(http, params, headers)
                last = max(1, math.ceil(count / LIMIT))
                p50, p99, count = await measure(http, {**params, "page": str(last)}, headers)
                report(Result(f"{name}, page {last}", p50, p99, count))
    finally:
        gc.callbacks.remove(PAUSES)
        await database.dispose()
    return results


async def measure_once(
    http: httpx.AsyncClient, params: dict[str, str], headers: dict[str, str]
) -> tuple[float, float, int]:
    response = await http.get(f"{PREFIX}/apis", params=params, headers=headers)
    response.raise_for_status()
    return 0.0, 0.0, int(response.json()["meta"]["count"])


def summary(label: str, results: list[Result]) -> None:
    if not results:
        return
    failed = [r for r in results if not r.passed]
    worst = max(results, key=lambda r: r.p99)
    print(
        f"{label}: {len(results) - len(failed)}/{len(results)} cases PASS "
        f"(p99 <= {TARGET_MS:.0f} ms); worst p99 {worst.p99:.1f} ms ({worst.label})"
    )
    for result in failed:
        print(f"  FAIL {result.label}: p99 {result.p99:.1f} ms")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, PostgresCluster(Path(tmp)) as cluster:
        workdir = Path(tmp)
        sqlite_url = f"sqlite+aiosqlite:///{workdir / 'catalogue.db'}"
        cluster.create_database("catalogue")
        pg_url = cluster.url("catalogue")
        print(f"{NODES:,} API nodes and {PRODUCTS:,} product nodes, bulk-inserted:")
        stores = []
        for label, url, dialect in (
            ("SQLite", sqlite_url, "sqlite"),
            ("PostgreSQL", pg_url, "postgresql"),
        ):
            if dialect not in STORES:
                continue
            world, url, seconds = await load(url, dialect)
            print(f"  {label}: {seconds:.1f} s (migrations, inserts, statistics)")
            stores.append((label, url, world))
        outcomes = [(label, await run(label, url, world, workdir)) for label, url, world in stores]
        print()
        for label, results in outcomes:
            summary(label, results)


if __name__ == "__main__":
    asyncio.run(main())
