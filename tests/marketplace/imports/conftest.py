"""Remote sides for imports: a second Portico management service (``remote_portico``, shared
with the connection tests), in which each test gets an organisation of its own with a
service account, and APIs, revisions and products made through its HTTP API; OpenAPI
documents with ``$ref``s; and a server whose answers a test switches (failures, a held
request). The app under test may reach 127.0.0.1 (``settings``), not 127.0.0.2."""

from __future__ import annotations

import asyncio
import copy
import re
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.job_worker import JobWorker
from portico.core.settings import Settings
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.connections.conftest import (  # noqa: F401  (fixtures)
    REMOTE_ADMIN,
    REMOTE_PASSWORD,
    RemotePortico,
    remote_portico,
    settings,
)
from tests.support.live_server import serving

CONNECTIONS = "/gateways/connections"


def document(title: str, version: str = "1.0.0", description: str = "") -> dict[str, Any]:
    info: dict[str, Any] = {"title": title, "version": version}
    if description:
        info["description"] = description
    return {
        "openapi": "3.0.3",
        "info": info,
        "paths": {
            "/" + re.sub(r"[^a-z0-9]+", "-", title.lower()): {
                "get": {"responses": {"200": {"description": "the items"}}}
            }
        },
    }


# ------------------------------------------------------------------ the remote management service


@dataclass
class RemoteOrg:
    """An organisation of the remote management service, for one test."""

    http: httpx.AsyncClient
    base_url: str
    org_id: str
    token: str

    def path(self, rest: str) -> str:
        return f"/api/orgs/{self.org_id}{rest}"

    async def api(self, name: str, *, version: str = "1.0.0", description: str = "") -> str:
        """An API made from an OpenAPI document (revision 1); its id."""
        made = await self.http.post(
            self.path("/apis/from-spec"),
            json={"spec": document(name, version, description)},
        )
        assert made.status_code == 201, made.text
        api_id: str = made.json()["api"]["id"]
        return api_id

    async def bare_api(self, name: str) -> str:
        """An API without a document or a revision."""
        made = await self.http.post(self.path("/apis"), json={"name": name})
        assert made.status_code == 201, made.text
        api_id: str = made.json()["id"]
        return api_id

    async def new_revision(self, api_id: str) -> int:
        """A clone of the latest revision: the API's next revision number."""
        latest = await self.http.get(self.path(f"/apis/{api_id}/revisions"), params={"size": 1})
        revision = latest.json()["items"][0]["id"]
        cloned = await self.http.post(self.path(f"/apis/{api_id}/revisions/{revision}/clone"))
        assert cloned.status_code == 201, cloned.text
        number: int = cloned.json()["number"]
        return number

    async def rename(self, api_id: str, name: str) -> None:
        renamed = await self.http.patch(self.path(f"/apis/{api_id}"), json={"name": name})
        assert renamed.status_code == 200, renamed.text

    async def product(
        self, name: str, api_ids: list[str], *, quota: dict[str, Any] | None = None
    ) -> str:
        body: dict[str, Any] = {
            "name": name,
            "displayName": name.title(),
            "description": f"the {name} product",
            "apiIds": api_ids,
        }
        if quota is not None:
            body["quota"] = quota
        made = await self.http.post(self.path("/products"), json=body)
        assert made.status_code == 201, made.text
        product_id: str = made.json()["id"]
        return product_id

    async def revoke_token(self) -> None:
        """Delete the organisation's service accounts: their tokens stop working."""
        listed = await self.http.get(self.path("/service-accounts"))
        for account in listed.json()["items"]:
            gone = await self.http.delete(self.path(f"/service-accounts/{account['id']}"))
            assert gone.status_code == 204, gone.text

    def connection(self, name: str = "remote", *, base_url: str | None = None) -> dict[str, Any]:
        return {
            "name": name,
            "source": "portico",
            "config": {
                "base_url": base_url or self.base_url,
                "org_id": self.org_id,
                "token": self.token,
            },
        }


@pytest.fixture(scope="module")
def remote_admin_token(remote_portico: RemotePortico) -> str:  # noqa: F811
    """The remote service's administrator, signed in once per module (argon2 is slow on
    purpose; the token lasts an hour)."""
    signed_in = httpx.post(
        f"{remote_portico.base_url}/api/auth/login",
        json={"email": REMOTE_ADMIN, "password": REMOTE_PASSWORD},
        timeout=30,
    )
    assert signed_in.status_code == 200, signed_in.text
    token: str = signed_in.json()["token"]
    return token


@pytest.fixture
async def remote_org(
    remote_portico: RemotePortico,  # noqa: F811
    remote_admin_token: str,
) -> AsyncIterator[RemoteOrg]:
    """A new organisation of the remote service with an Integration service account."""
    headers = {"Authorization": f"Bearer {remote_admin_token}"}
    async with httpx.AsyncClient(
        base_url=remote_portico.base_url, headers=headers, timeout=30
    ) as http:
        org = await http.post("/api/orgs", json={"name": f"org-{uuid.uuid4().hex[:12]}"})
        assert org.status_code == 201, org.text
        org_id = org.json()["id"]
        roles = await http.get(f"/api/orgs/{org_id}/roles", params={"size": 100})
        integration = next(r["id"] for r in roles.json()["items"] if r["name"] == "Integration")
        account = await http.post(
            f"/api/orgs/{org_id}/service-accounts",
            json={"name": "marketplace", "roleIds": [integration]},
        )
        assert account.status_code == 201, account.text
        yield RemoteOrg(http, remote_portico.base_url, org_id, account.json()["token"])


async def connect(
    client: httpx.AsyncClient, who: SiteAccount, body: dict[str, Any]
) -> dict[str, Any]:
    """Create a connection through the admin API; its representation."""
    created = await client.post(url(CONNECTIONS), json=body, headers=who.headers)
    assert created.status_code == 201, created.text
    data: dict[str, Any] = created.json()["data"]
    return data


# ------------------------------------------------------------------ a server the test steers


@dataclass
class Switchboard:
    """What the steerable server answers: documents by path, failures to come, a held path."""

    documents: dict[str, Any] = field(default_factory=dict)
    #: path → how many of its next requests answer 503
    failures: dict[str, int] = field(default_factory=dict)
    #: path → requests seen
    seen: dict[str, int] = field(default_factory=dict)
    #: forward what is not a document to this base URL (the remote management service)
    upstream: str | None = None
    #: a path whose requests wait for ``release`` (after setting ``arrived``)
    held: str | None = None
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.documents.clear()
            self.failures.clear()
            self.seen.clear()
            self.upstream = self.held = None
            self.arrived.clear()
            self.release.clear()


BOARD = Switchboard()


async def _answer(request: Request) -> Response:
    path = request.url.path
    with BOARD.lock:
        BOARD.seen[path] = BOARD.seen.get(path, 0) + 1
        failing = BOARD.failures.get(path, 0)
        if failing:
            BOARD.failures[path] = failing - 1
        held = BOARD.held is not None and path == BOARD.held
        found = copy.deepcopy(BOARD.documents.get(path))
        upstream = BOARD.upstream
    if failing:
        return PlainTextResponse("down for a moment", status_code=503)
    if held:
        BOARD.arrived.set()
        for _ in range(2000):  # at most 20 s, then answer anyway
            if BOARD.release.is_set():
                break
            await asyncio.sleep(0.01)
    if found is not None:
        if isinstance(found, str):
            return PlainTextResponse(found)
        return JSONResponse(found)
    if upstream is not None:
        async with httpx.AsyncClient(base_url=upstream, timeout=30) as http:
            forwarded = await http.get(
                path,
                params=request.query_params,
                headers={"Authorization": request.headers.get("authorization", "")},
            )
        return Response(
            forwarded.content,
            status_code=forwarded.status_code,
            media_type=forwarded.headers.get("content-type"),
        )
    return PlainTextResponse("not found", status_code=404)


STEERABLE = Starlette(routes=[Route("/{path:path}", _answer)])


@dataclass
class Steerable:
    base_url: str
    #: the same server on 127.0.0.2, which the app under test may not reach
    refused_base_url: str
    board: Switchboard


@pytest.fixture(scope="module")
def steerable_server() -> Iterator[tuple[str, str]]:
    with (
        serving(STEERABLE, "steerable") as base,
        serving(STEERABLE, "steerable-2", host="127.0.0.2") as other,
    ):
        yield base, other


@pytest.fixture
def steerable(steerable_server: tuple[str, str]) -> Iterator[Steerable]:
    BOARD.reset()
    yield Steerable(*steerable_server, BOARD)
    BOARD.reset()


# ------------------------------------------------------------------ the jobs worker


@pytest.fixture
def worker(database: Database, clock: Clock, settings: Settings) -> JobWorker:  # noqa: F811
    """A jobs worker with the app's settings; tests run its jobs with ``run_next``."""
    return JobWorker(database, clock, settings=settings, poll_seconds=0.05)
