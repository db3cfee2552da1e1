"""Fixtures of the admin API's authentication tests: issuance enabled through the stored web
API key, clients from other addresses, and further control-plane apps on the same store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from starlette.routing import Mount

from portico.app import create_app
from portico.core.audit import Actor
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.sealing import secret_box
from portico.core.settings import Settings
from portico.marketplace.app import PREFIX
from portico.marketplace.auth import service as auth_service
from tests.conftest import TEST_PASSWORD
from tests.marketplace.conftest import url

WEB_API_KEY = "AIzaSyTest-web-api-key-0123456789"


async def enable_issuance(database: Database, settings: Settings) -> None:
    async with database.session() as session, session.begin():
        await auth_service.set_web_api_key(
            session=session,
            box=secret_box(tuple(settings.signing_keys())),
            value=WEB_API_KEY,
            actor=Actor.system("test"),
            clock=Clock(),
        )


@pytest.fixture
async def issuance(database: Database, settings: Settings) -> None:
    """Token issuance enabled, as `portico admin-api set-web-api-key` leaves it."""
    await enable_issuance(database, settings)


@asynccontextmanager
async def client_for(app: Any, address: str = "127.0.0.1") -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, client=(address, 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http
    limiter = getattr(_admin_api(app).state, "rate_limiter", None)
    if limiter is not None:
        await limiter.aclose()


def _admin_api(app: Any) -> Any:
    for route in app.routes:
        if isinstance(route, Mount) and route.path == PREFIX:
            return route.app
    raise AssertionError("the admin API is not mounted")


AppMaker = Callable[..., Any]


@pytest.fixture
def make_app(settings: Settings, database: Database, clock: Clock) -> AppMaker:
    """Another control-plane app on the same store and clock, with settings changed (the
    values are not validated: give them their field types)."""

    def make(**changes: Any) -> Any:
        return create_app(settings.model_copy(update=changes), database=database, clock=clock)

    return make


async def sign_in(
    client: httpx.AsyncClient, email: str, password: str = TEST_PASSWORD, **headers: str
) -> httpx.Response:
    return await client.post(
        url("/auth/token"), json={"email": email, "password": password}, headers=headers
    )


async def refresh(client: httpx.AsyncClient, token: str) -> httpx.Response:
    return await client.post(url("/auth/token/refresh"), json={"refresh_token": token})
