"""Real remote sides for the connectors: a second Portico control plane (its own store, an
organisation, service accounts) and OpenAPI documents, each served by uvicorn on loopback.

The app under test allows 127.0.0.1 explicitly (``PORTICO_MARKETPLACE_EGRESS_ALLOW``): the
SSRF guard refuses loopback otherwise, which ``strict_client`` (the same store, no allow-list)
shows.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from portico.app import create_app
from portico.bootstrap import bootstrap
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.settings import Settings
from tests.conftest import TEST_SECRET, DatabaseTemplate
from tests.support.live_server import serving

LOOPBACK = "127.0.0.1/32"
REMOTE_ADMIN = "remote-admin@example.com"
REMOTE_PASSWORD = "remote-password-123"


def app_settings(database_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(
        environment="test",
        data_dir=tmp_path,
        database_url=database_url,
        secret_key=SecretStr(TEST_SECRET),
        log_json=False,
        _env_file=None,  # type: ignore[call-arg]
        **overrides,
    )


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """The app under test may reach loopback, where the remote sides of the tests run."""
    return app_settings(database_url, tmp_path, marketplace_egress_allow=[LOOPBACK])


@pytest.fixture
async def strict_client(
    settings: Settings, database: Database, clock: Clock
) -> AsyncIterator[httpx.AsyncClient]:
    """The same installation (store, keys) with the default egress policy: no allow-list."""
    strict = settings.model_copy(update={"marketplace_egress_allow": []})
    app = create_app(strict, database=database, clock=clock)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


# ------------------------------------------------------------------ a remote management service


@dataclass
class RemotePortico:
    base_url: str
    org_id: str
    #: a service account with the predefined Integration role
    token: str
    #: a service account whose only role grants no api.read
    token_without_api_read: str
    #: the org of another organisation (the Integration token is not a member)
    other_org_id: str


@pytest.fixture(scope="module")
def remote_portico(
    db_template: DatabaseTemplate, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RemotePortico]:
    """A second Portico control plane on loopback, with its own store: the remote side of
    the ``portico`` connector. One per module (starting one costs more than the tests)."""
    tmp_path = tmp_path_factory.mktemp("remote-portico")
    database_url = db_template.new_url(tmp_path)
    config = app_settings(
        database_url,
        tmp_path,
        log_format="text",
        log_level="WARNING",
        bootstrap_admin_email=REMOTE_ADMIN,
        bootstrap_admin_password=SecretStr(REMOTE_PASSWORD),
    )
    asyncio.run(_bootstrap(config))
    try:
        with serving(create_app(config), "remote-portico") as base:
            yield _seed(base)
    finally:
        db_template.drop(database_url)


async def _bootstrap(config: Settings) -> None:
    database = Database(config.resolved_database_url)
    try:
        await bootstrap(config, database)
    finally:
        await database.dispose()


def _seed(base: str) -> RemotePortico:
    """Through the remote's own API: sign in, then make the service accounts."""
    with httpx.Client(base_url=base, timeout=30) as http:
        signed_in = http.post(
            "/api/auth/login", json={"email": REMOTE_ADMIN, "password": REMOTE_PASSWORD}
        )
        assert signed_in.status_code == 200, signed_in.text
        http.headers["Authorization"] = f"Bearer {signed_in.json()['token']}"
        org = http.get("/api/orgs").json()["items"][0]["id"]
        other = http.post("/api/orgs", json={"name": "elsewhere"})
        assert other.status_code == 201, other.text
        roles = {
            r["name"]: r["id"]
            for r in http.get(f"/api/orgs/{org}/roles", params={"size": 100}).json()["items"]
        }
        blind = http.post(
            f"/api/orgs/{org}/roles",
            json={"name": "analytics only", "permissions": ["analytics.read"]},
        )
        assert blind.status_code == 201, blind.text

        def account(name: str, role_id: str) -> str:
            made = http.post(
                f"/api/orgs/{org}/service-accounts", json={"name": name, "roleIds": [role_id]}
            )
            assert made.status_code == 201, made.text
            token: str = made.json()["token"]
            return token

        return RemotePortico(
            base_url=base,
            org_id=org,
            token=account("marketplace", roles["Integration"]),
            token_without_api_read=account("analytics", blind.json()["id"]),
            other_org_id=other.json()["id"],
        )


# ------------------------------------------------------------------ OpenAPI documents over HTTP

GOOD_30_JSON = {
    "openapi": "3.0.3",
    "info": {"title": "Orders", "version": "1.0.0"},
    "paths": {"/orders": {"get": {"responses": {"200": {"description": "the orders"}}}}},
}
GOOD_31_YAML = """\
openapi: 3.1.0
info:
  title: Payments
  version: "2.1"
paths:
  /payments:
    get:
      responses:
        "200":
          description: the payments
"""
BROKEN_YAML = "openapi: 3.0.0\ninfo: [title: broken\n  paths: {\n"
SWAGGER_2 = {"swagger": "2.0", "info": {"title": "Old", "version": "1"}, "paths": {}}


class Gate:
    """A document that answers only once the test opens the gate (the server runs in a
    thread of its own: thread-safe events)."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.opened = threading.Event()

    def reset(self) -> None:
        self.arrived.clear()
        self.opened.clear()


GATE = Gate()


async def _held(request: Request) -> Response:
    GATE.arrived.set()
    for _ in range(1000):  # at most 10 s, then answer anyway
        if GATE.opened.is_set():
            break
        await asyncio.sleep(0.01)
    return JSONResponse(GOOD_30_JSON)


async def _redirect(request: Request) -> Response:
    return RedirectResponse(request.query_params["to"], status_code=302)


DOCUMENTS = Starlette(
    routes=[
        Route("/orders.json", lambda _: JSONResponse(GOOD_30_JSON)),
        Route("/payments.yaml", lambda _: PlainTextResponse(GOOD_31_YAML)),
        Route("/broken.yaml", lambda _: PlainTextResponse(BROKEN_YAML)),
        Route("/swagger.json", lambda _: JSONResponse(SWAGGER_2)),
        Route("/redirect", _redirect),
        Route("/held.json", _held),
    ]
)


@dataclass
class DocumentServers:
    #: on 127.0.0.1
    base_url: str
    #: the same documents on 127.0.0.2 (another loopback address, for allow-list tests)
    other_base_url: str


@pytest.fixture(scope="module")
def documents() -> Iterator[DocumentServers]:
    with (
        serving(DOCUMENTS, "openapi-documents") as base,
        serving(DOCUMENTS, "openapi-documents-2", host="127.0.0.2") as other,
    ):
        yield DocumentServers(base, other)
