"""Fixtures shared by the whole suite.

The store is chosen per run: ``pytest --db=sqlite`` (default) or ``pytest --db=postgresql``
(``make test`` runs both). The schema is built once per run from the Alembic migrations into
a template; every test gets its own copy (a file copy on SQLite, ``CREATE DATABASE ...
TEMPLATE`` on PostgreSQL, made ahead by a thread: ``ClonePool``), so tests exercise real
commits and cannot see each other's data.

Under ``--db=postgresql`` only the tests that use the store run: a test is kept when one of
``STORE_FIXTURES`` is among its fixtures, directly or through others (``client``, ``database``,
``settings``... all lead to ``database_url``). The others cannot behave differently on another
store, they already ran under ``--db=sqlite``: they are deselected, and the summary says how
many and from where. So are the tests marked ``store_agnostic``: they need a store, but what
they check reads the same on any store (permissions, validation of what is sent, lookups
of what does not exist).

The suite runs in parallel (pytest-xdist, ``-n 2`` in the Makefile): every worker is a process
of its own with its own session fixtures (its template, its PostgreSQL cluster, its
``tmp_path_factory`` directory), so nothing here is shared between workers.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import threading
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import select

from portico.app import create_app
from portico.core.account import AccountStatus, User
from portico.core.audit import Actor
from portico.core.clock import Clock, utcnow
from portico.core.db.engine import Database
from portico.core.db.migrate import upgrade
from portico.core.settings import Settings
from portico.management.org import service as org_service
from portico.management.org.models import Membership
from portico.management.org.schemas import OrganizationCreate
from portico.management.role.models import Role
from tests.support.pgcluster import PostgresCluster

TEST_PASSWORD = "correct horse battery staple"
TEST_SECRET = "test-secret-key-0123456789abcdef0123456789"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--db",
        choices=("sqlite", "postgresql"),
        default="sqlite",
        help="store the suite runs against",
    )


# xdist's scope-based schedulers queue tests by node id, and schemathesis gives the tests it
# makes of one function (one per operation) the same node id: they would run one operation
# and drop the others without a word.
_DROPPING_DIST_MODES = frozenset({"loadscope", "loadfile", "loadgroup"})


def pytest_configure(config: pytest.Config) -> None:
    # for test modules that size their work by store at import (test_schemathesis.py)
    os.environ["PORTICO_TEST_STORE"] = str(config.getoption("--db"))
    mode = config.getoption("dist", "no")
    if mode in _DROPPING_DIST_MODES:
        raise pytest.UsageError(
            f"--dist {mode} would run one schemathesis test per function: use load or worksteal"
        )


# A test that requests none of these (directly or through other fixtures) never touches the
# store under test.
STORE_FIXTURES = frozenset({"database_url", "db_template", "postgres_cluster", "db_backend"})
_STORELESS = pytest.StashKey[Counter[str]]()


def _area(item: pytest.Item) -> str:
    """``tests/gateway`` for ``tests/gateway/http/test_proxy.py::...``."""
    return "/".join(item.nodeid.split("::", 1)[0].split("/")[:2])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--db") != "postgresql":
        return
    kept: list[pytest.Item] = []
    storeless: list[pytest.Item] = []
    for item in items:
        uses_store = not STORE_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("store_agnostic") is not None:
            uses_store = False  # it needs a store, but none of its outcomes depends on which
        (kept if uses_store else storeless).append(item)
    counts = Counter(_area(item) for item in storeless)
    config.stash[_STORELESS] = counts
    if hasattr(config, "workeroutput"):  # an xdist worker: the controller prints the summary
        config.workeroutput["storeless"] = dict(counts)
    if storeless:
        config.hook.pytest_deselected(items=storeless)
        items[:] = kept


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller collects nothing itself: it takes the count from a worker (all
    workers collect the same tests)."""
    output = getattr(node, "workeroutput", {})
    if "storeless" in output:
        node.config.stash[_STORELESS] = Counter(output["storeless"])
    for what, where in output.get("artifacts", {}).items():
        report_artifact(node.config, what, where)


#: what a run leaves for people to look at (the console's screenshots), printed at its end
_ARTIFACTS = pytest.StashKey[dict[str, str]]()


def report_artifact(config: pytest.Config, what: str, where: str) -> None:
    """Say at the end of the run that ``what`` is at ``where`` (from any xdist worker)."""
    config.stash.setdefault(_ARTIFACTS, {})[what] = where
    if hasattr(config, "workeroutput"):
        config.workeroutput.setdefault("artifacts", {})[what] = where


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for what, where in sorted(terminalreporter.config.stash.get(_ARTIFACTS, {}).items()):
        terminalreporter.write_sep("-", f"{what}: {where}")
    counts = terminalreporter.config.stash.get(_STORELESS, None)
    if counts is None:
        return
    where = ", ".join(f"{area} {n}" for area, n in sorted(counts.items()))
    terminalreporter.write_sep(
        "-",
        f"--db=postgresql: {counts.total()} tests deselected that use no store"
        f" (they run under --db=sqlite){': ' + where if where else ''}",
    )


@pytest.fixture(scope="session")
def db_backend(request: pytest.FixtureRequest) -> str:
    return str(request.config.getoption("--db"))


class ClonePool:
    """PostgreSQL copies of the template made ahead of the tests that take them, and dropped
    after them, by two threads. A copy (``CREATE DATABASE ... TEMPLATE``, a psql process, a
    file copy and two checkpoints) and a drop cost a test 0.2-0.4 s of waiting otherwise; here
    they overlap the tests' own work. ``AHEAD`` copies wait at most (a few MB each)."""

    AHEAD = 2

    def __init__(self, cluster: PostgresCluster, template: str) -> None:
        self.cluster = cluster
        self.template = template
        self.ready: queue.Queue[str | BaseException] = queue.Queue(maxsize=self.AHEAD)
        self.used: queue.Queue[str | None] = queue.Queue()
        self.stopping = threading.Event()
        self.threads = [
            threading.Thread(target=self._make, name="pg-clone-maker", daemon=True),
            threading.Thread(target=self._drop, name="pg-clone-dropper", daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def take(self) -> str:
        made = self.ready.get()
        if isinstance(made, BaseException):
            raise RuntimeError("the template could not be copied") from made
        return made

    def give_back(self, name: str) -> None:
        self.used.put(name)

    def close(self) -> None:
        self.stopping.set()
        with contextlib.suppress(queue.Empty):
            while True:  # free the maker if it waits on a full queue
                self.ready.get_nowait()
        self.used.put(None)
        for thread in self.threads:
            thread.join(timeout=30)

    def _make(self) -> None:
        while not self.stopping.is_set():
            name = f"t_{uuid.uuid4().hex[:16]}"
            try:
                self.cluster.create_database(name, template=self.template)
            except BaseException as error:  # handed to the test that takes it
                self.ready.put(error)
                return
            self.ready.put(name)

    def _drop(self) -> None:
        while (name := self.used.get()) is not None:
            with contextlib.suppress(RuntimeError):  # the cluster goes away at the end anyway
                self.cluster.drop_database(name)


@dataclass
class DatabaseTemplate:
    backend: str
    sqlite_file: Path | None = None
    cluster: PostgresCluster | None = None
    template_name: str = "portico_template"
    clones: ClonePool | None = None

    def new_url(self, tmp_path: Path) -> str:
        if self.sqlite_file is not None:
            target = tmp_path / "portico.db"
            shutil.copyfile(self.sqlite_file, target)
            return f"sqlite+aiosqlite:///{target}"
        assert self.cluster is not None and self.clones is not None
        return self.cluster.url(self.clones.take())

    def drop(self, url: str) -> None:
        if self.clones is not None:
            self.clones.give_back(url.rsplit("/", 1)[1])


@pytest.fixture(scope="session")
def postgres_cluster(
    db_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PostgresCluster | None]:
    if db_backend != "postgresql":
        yield None
        return
    cluster = PostgresCluster(tmp_path_factory.mktemp("pg"))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def db_template(
    db_backend: str,
    postgres_cluster: PostgresCluster | None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[DatabaseTemplate]:
    if postgres_cluster is None:
        path = tmp_path_factory.mktemp("sqlite-template") / "template.db"
        upgrade(f"sqlite+aiosqlite:///{path}")
        yield DatabaseTemplate("sqlite", sqlite_file=path)
        return
    template = DatabaseTemplate("postgresql", cluster=postgres_cluster)
    postgres_cluster.create_database(template.template_name)
    upgrade(postgres_cluster.url(template.template_name))
    template.clones = ClonePool(postgres_cluster, template.template_name)
    try:
        yield template
    finally:
        template.clones.close()


@pytest.fixture
def database_url(db_template: DatabaseTemplate, tmp_path: Path) -> Iterator[str]:
    url = db_template.new_url(tmp_path)
    yield url
    db_template.drop(url)


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    db = Database(database_url)
    yield db
    await db.dispose()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(
        environment="test",
        data_dir=tmp_path,
        database_url=database_url,
        secret_key=SecretStr(TEST_SECRET),
        log_json=False,
        _env_file=None,  # type: ignore[call-arg]
    )


@pytest.fixture
def app(settings: Settings, database: Database, clock: Clock):  # type: ignore[no-untyped-def]
    return create_app(settings, database=database, clock=clock)


@pytest.fixture
async def client(app) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


# ---------------------------------------------------------------------------- data factories

_PASSWORD_HASH: str | None = None


def password_hash() -> str:
    """argon2 is slow on purpose; hash the shared test password once per process."""
    global _PASSWORD_HASH
    if _PASSWORD_HASH is None:
        from portico.core.passwords import hash_password

        _PASSWORD_HASH = hash_password(TEST_PASSWORD)
    return _PASSWORD_HASH


@dataclass
class Account:
    """A user created for a test, with a ready bearer token."""

    id: uuid.UUID
    email: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class Org:
    id: uuid.UUID
    name: str


class Factory:
    """Writes test data through the services (so predefined roles exist as in production)."""

    def __init__(self, database: Database, app) -> None:  # type: ignore[no-untyped-def]
        self.database = database
        self.app = app

    async def user(
        self,
        org: Org | None = None,
        *,
        roles: tuple[str, ...] = (),
        email: str | None = None,
        platform_admin: bool = False,
        status: AccountStatus = AccountStatus.ACTIVE,
    ) -> Account:
        email = email or f"user-{uuid.uuid4().hex[:10]}@example.com"
        async with self.database.session() as session, session.begin():
            user = User(
                id=uuid.uuid4(),
                email=email,
                display_name=email.split("@")[0],
                password_hash=password_hash(),
                status=status,
                is_platform_admin=platform_admin,
            )
            session.add(user)
            await session.flush()
            if org is not None:
                role_rows = list(
                    await session.scalars(
                        select(Role).where(Role.org_id == org.id, Role.name.in_(roles))
                    )
                )
                assert len(role_rows) == len(roles), f"unknown role among {roles}"
                session.add(
                    Membership(
                        id=uuid.uuid4(),
                        org_id=org.id,
                        user_id=user.id,
                        roles=role_rows,
                        accepted_at=utcnow(),
                    )
                )
        token = self.app.state.access_tokens.issue(str(user.id)).token
        return Account(user.id, email, token)

    async def org(self, name: str | None = None) -> Org:
        name = name or f"org-{uuid.uuid4().hex[:8]}"
        async with self.database.session() as session, session.begin():
            org = await org_service.create(
                session=session,
                actor=Actor.system("test"),
                data=OrganizationCreate(name=name),
                owner=None,
            )
        return Org(org.id, org.name)


@pytest.fixture
def factory(database: Database, app) -> Factory:  # type: ignore[no-untyped-def]
    return Factory(database, app)


@pytest.fixture
async def org(factory: Factory) -> Org:
    return await factory.org("Acme")


@pytest.fixture
async def admin(factory: Factory, org: Org) -> Account:
    """An org member with the predefined Administrator role (not a platform admin)."""
    return await factory.user(org, roles=("Administrator",), email="admin@acme.example.com")


@pytest.fixture
async def viewer(factory: Factory, org: Org) -> Account:
    return await factory.user(org, roles=("Viewer",), email="viewer@acme.example.com")
