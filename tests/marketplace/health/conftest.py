"""Fixtures of the health tests: a real HTTP server on loopback answering health checks in
every way, API nodes pointing at it, the callers and a jobs worker allowed to reach
loopback (the SSRF guard refuses it otherwise)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.job_worker import JobWorker
from portico.core.settings import Settings
from portico.marketplace import permissions
from portico.marketplace.node.models import Bundle, CatalogueNode, ModerationState
from portico.marketplace.permissions import BASELINE, SiteRole
from tests.marketplace.conftest import SiteAccount, SiteFactory
from tests.marketplace.content.catalogue import API_CLIENT, EPOCH, add_test_roles
from tests.support.live_server import serving

#: may read the dashboard, may not queue checks
HEALTH_VIEWER = "health_viewer"


@pytest.fixture(autouse=True)
def test_roles(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(
        permissions.ROLES_BY_ID,
        HEALTH_VIEWER,
        SiteRole(
            HEALTH_VIEWER, "Health viewer", 11, frozenset({BASELINE, "view api health dashboard"})
        ),
    )
    yield from add_test_roles(monkeypatch)


@pytest.fixture
async def manager(site: SiteFactory) -> SiteAccount:
    """An API manager: reads the dashboard and queues checks."""
    return await site.account("api_manager")


@pytest.fixture
async def viewer(site: SiteFactory) -> SiteAccount:
    return await site.account(HEALTH_VIEWER)


@pytest.fixture
async def client_only(site: SiteFactory) -> SiteAccount:
    return await site.account(API_CLIENT)


async def _answer(request: Request) -> Response:
    kind = request.path_params["kind"]
    if kind == "up":
        return JSONResponse({"status": "pass"})
    if kind == "warn":
        return JSONResponse({"status": "warn", "checks": {}})
    if kind == "fail":
        return JSONResponse({"status": "fail"}, status_code=503)
    if kind == "says-down":
        return JSONResponse({"status": "down"})
    if kind == "plain":
        return PlainTextResponse("OK")
    if kind == "endless":  # a body that never ends: a check that read it whole never would
        return StreamingResponse(_endless(), media_type="application/json")
    if kind == "metadata":  # a redirect into the cloud metadata address
        return RedirectResponse("http://169.254.169.254/latest/meta-data/", status_code=302)
    return PlainTextResponse("no such thing", status_code=404)


async def _endless() -> AsyncIterator[bytes]:
    yield b'{"status": "fail", "padding": "'
    while True:
        yield b"x" * 65536
        # uvicorn drops what is sent after the client went away without suspending the
        # sender: without a pause this loop would hold the server's event loop for good
        # (its shutdown waited out the fixture's whole join, and the thread kept a core busy)
        await asyncio.sleep(0.001)


@pytest.fixture
def backend() -> Iterator[str]:
    app = Starlette(routes=[Route("/{kind}/health", _answer), Route("/{kind}", _answer)])
    with serving(app, "health-backend") as base:
        yield base


def loopback(settings: Settings, **update: Any) -> Settings:
    return settings.model_copy(update={"marketplace_egress_allow": ["127.0.0.0/8"], **update})


@pytest.fixture
def worker(database: Database, clock: Clock, settings: Settings) -> JobWorker:
    """A jobs worker that may reach loopback; tests run its jobs with ``run_next``."""
    return JobWorker(database, clock, settings=loopback(settings), poll_seconds=0.05)


def document(server: str | None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}}
    if server is not None:
        out["servers"] = [{"url": server}]
    return {**out, **extra}


async def api_node(
    database: Database,
    documentation: dict[str, Any] | None,
    *,
    title: str | None = None,
    published: bool = True,
    bundle: Bundle = Bundle.APIS,
) -> uuid.UUID:
    node = CatalogueNode(
        id=uuid.uuid4(),
        bundle=bundle,
        title=title or f"api {uuid.uuid4().hex[:8]}",
        documentation=documentation,
        moderation_state=ModerationState.PUBLISHED if published else ModerationState.DRAFT,
        published=published,
        created_at=EPOCH,
        updated_at=EPOCH,
    )
    async with database.session() as session, session.begin():
        session.add(node)
    return node.id
