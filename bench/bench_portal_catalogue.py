"""The developer portal's ``GET /apis`` at 100,000 API nodes, on SQLite and PostgreSQL:
what each kind of caller sees (anonymous, signed in, a member of an organisation and of one
of its teams), with each sort, a search and the last page; p50/p99 per case against the
50 ms target. Printed, never asserted.

The nodes are ``bench_catalogue.py``'s (same generator, same mix: 50 % published; 60 %
public, 30 % internal, 10 % organisation), and each organisation-visible node gets one
audience row: one of the 25 organisations, a third of them restricted to one of its two
teams. The member is an active member of the first organisation and in its first team.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from pydantic import SecretStr
from sqlalchemy import insert, select, text
from starlette.routing import Mount

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support, bench

from bench.bench_catalogue import NODES, TARGET_MS, World, load

from portico.app import create_app
from portico.core.account import User
from portico.core.db.engine import Database
from portico.core.passwords import hash_password
from portico.core.settings import Settings
from portico.marketplace.app import PREFIX as ADMIN_PREFIX
from portico.marketplace.node.models import CatalogueNode, NodeAudience, Visibility
from portico.marketplace.organisation.models import (
    MembershipStatus,
    OrganisationMembership,
    Team,
    TeamMembership,
)
from portico.portal.app import PREFIX
from portico.runner import SERVE_YOUNG_COLLECTION, settle_heap
from tests.support.pgcluster import PostgresCluster

REQUESTS = int(os.environ.get("BENCH_REQUESTS", "50"))
LIMIT = 50
SORTS = ["title", "-title", "created_at", "-created_at", "updated_at", "-updated_at"]


async def audiences(url: str, world: World) -> list[uuid.UUID]:
    """Teams (two per organisation) and one audience row per organisation-visible node;
    the first organisation's teams."""
    rng = random.Random(23)
    database = Database(url)
    try:
        async with database.session() as session, session.begin():
            teams = {
                org: [Team(id=uuid.uuid4(), organisation_id=org, name=f"Team {i}") for i in (1, 2)]
                for org in world.organisations
            }
            session.add_all([t for pair in teams.values() for t in pair])
            await session.flush()
            ids = list(
                await session.scalars(
                    select(CatalogueNode.id).where(
                        CatalogueNode.visibility == Visibility.ORGANISATION
                    )
                )
            )
            rows = []
            for node_id in ids:
                org = rng.choice(world.organisations)
                team = rng.choice(teams[org]).id if rng.random() < 1 / 3 else None
                rows.append(
                    {
                        "id": uuid.uuid4(),
                        "node_id": node_id,
                        "organisation_id": org,
                        "team_id": team,
                    }
                )
            for first in range(0, len(rows), 5_000):
                await session.execute(insert(NodeAudience), rows[first : first + 5_000])
        if url.startswith("sqlite"):
            async with database.session() as session, session.begin():
                await session.execute(text("ANALYZE"))
        else:
            async with database.engine.connect() as connection:
                autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
                await autocommit.execute(text("VACUUM ANALYZE"))
        return [t.id for t in teams[world.organisations[0]]]
    finally:
        await database.dispose()


async def tokens(app: object, database: Database, world: World, team: uuid.UUID) -> dict[str, str]:
    """ID tokens of a signed-in account and of a member (of the first organisation and its
    first team)."""
    admin_api = next(r.app for r in app.routes if isinstance(r, Mount) and r.path == ADMIN_PREFIX)  # type: ignore[attr-defined]
    out = {}
    async with database.session() as session, session.begin():
        for who in ("someone", "member"):
            user = User(
                id=uuid.uuid4(),
                email=f"{who}-{uuid.uuid4().hex[:6]}@example.com",
                password_hash=hash_password("x" * 12),
            )
            session.add(user)
            await session.flush()
            if who == "member":
                membership = OrganisationMembership(
                    id=uuid.uuid4(),
                    organisation_id=world.organisations[0],
                    user_id=user.id,
                    status=MembershipStatus.ACTIVE,
                )
                session.add(membership)
                await session.flush()
                session.add(TeamMembership(team_id=team, membership_id=membership.id))
            issued = await admin_api.state.id_tokens.issue(
                session, user_id=user.id, email=user.email
            )
            out[who] = issued.token
    return out


async def measure(
    http: httpx.AsyncClient, params: dict[str, str], headers: dict[str, str]
) -> tuple[float, float, int]:
    first = await http.get(f"{PREFIX}/apis", params=params, headers=headers)
    first.raise_for_status()
    times = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        response = await http.get(f"{PREFIX}/apis", params=params, headers=headers)
        times.append(time.perf_counter() - started)
        response.raise_for_status()
    times.sort()
    p99 = times[max(0, math.ceil(len(times) * 0.99) - 1)]
    return statistics.median(times) * 1000, p99 * 1000, int(first.json()["meta"]["count"])


async def run(label: str, url: str, world: World, team: uuid.UUID, workdir: Path) -> None:
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
    issued = await tokens(app, database, world, team)
    callers = {
        "anonymous": {},
        "signed in": {"Authorization": f"Bearer {issued['someone']}"},
        "member": {"Authorization": f"Bearer {issued['member']}"},
    }
    settle_heap(SERVE_YOUNG_COLLECTION)
    failed = 0
    transport = httpx.ASGITransport(app=app)
    print(f"\n{label}: portal GET /apis, limit {LIMIT}, {REQUESTS} requests per case")
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://b", timeout=60) as http:
            for who, headers in callers.items():
                cases: list[tuple[str, dict[str, str]]] = [
                    (f"sort={s}", {"sort": s}) for s in SORTS
                ]
                cases += [
                    ("search=orders", {"filter[search]": "orders"}),
                    ("search=7777", {"filter[search]": "7777"}),
                    ("organisation=<first>", {"filter[organisation]": str(world.organisations[0])}),
                ]
                _, _, count = await measure(http, {}, headers)
                last = str(max(1, math.ceil(count / LIMIT)))
                cases += [(f"sort={s}, page {last}", {"sort": s, "page": last}) for s in SORTS[:3]]
                for name, params in cases:
                    p50, p99, matching = await measure(http, params, headers)
                    verdict = "PASS" if p99 <= TARGET_MS else "FAIL"
                    failed += verdict == "FAIL"
                    print(
                        f"  {who:<10} {name:<28} p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  "
                        f"{verdict}  ({matching:,} visible)",
                        flush=True,
                    )
    finally:
        await database.dispose()
    print(f"{label}: {failed} case(s) over {TARGET_MS:.0f} ms at p99")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, PostgresCluster(Path(tmp)) as cluster:
        workdir = Path(tmp)
        cluster.create_database("portal")
        stores = []
        for label, url, dialect in (
            ("SQLite", f"sqlite+aiosqlite:///{workdir / 'portal.db'}", "sqlite"),
            ("PostgreSQL", cluster.url("portal"), "postgresql"),
        ):
            world, url, seconds = await load(url, dialect)
            team = (await audiences(url, world))[0]
            print(f"{label}: {NODES:,} API nodes loaded in {seconds:.1f} s")
            stores.append((label, url, world, team))
        for label, url, world, team in stores:
            await run(label, url, world, team, workdir)


if __name__ == "__main__":
    asyncio.run(main())
