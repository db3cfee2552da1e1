"""``POST /auth/token``: tokens that work, uniform failures, disabled issuance, the CLI that
enables it, and the description in /openapi.json."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
import jwt
import pytest
from argon2 import PasswordHasher
from pydantic import SecretStr
from sqlalchemy import select
from typer.testing import CliRunner

from portico.cli import app as cli_app
from portico.core.account import AccountStatus, User
from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.core.passwords import needs_rehash
from portico.core.sealing import secret_box
from portico.core.settings import Settings
from portico.marketplace.auth import service as auth_service
from portico.marketplace.auth.models import SiteSetting
from tests.conftest import TEST_PASSWORD, TEST_SECRET
from tests.marketplace.auth.conftest import (
    WEB_API_KEY,
    AppMaker,
    client_for,
    enable_issuance,
    refresh,
    sign_in,
)
from tests.marketplace.conftest import SiteFactory, url


async def test_sign_in_returns_tokens_that_work(
    client: httpx.AsyncClient, site: SiteFactory, database: Database, issuance: None
) -> None:
    admin = await site.account(platform_admin=True, email="root@portal.example.com")
    response = await sign_in(client, "ROOT@portal.example.com ")
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    data = response.json()["data"]
    assert set(data) == {"id_token", "refresh_token", "token_type", "expires_in"}
    assert data["token_type"] == "Bearer" and data["expires_in"] == 3600
    header = jwt.get_unverified_header(data["id_token"])
    assert header["alg"] == "ES256" and header["kid"]
    claims = jwt.decode(data["id_token"], options={"verify_signature": False})
    assert claims["sub"] == str(admin.id) and claims["email"] == admin.email
    assert claims["exp"] - claims["iat"] == 3600
    bearer = {"Authorization": f"Bearer {data['id_token']}"}
    assert (await client.get(url("/openapi.json"), headers=bearer)).status_code == 200
    async with database.session() as session:
        user = await session.get(User, admin.id)
        assert user is not None and user.last_login_at is not None
        event = await session.scalar(select(AuditEntry).where(AuditEntry.action == "auth.sign_in"))
    assert event is not None
    assert (event.surface, event.module, event.entity_id) == (
        "marketplace",
        "admin_api",
        str(admin.id),
    )
    assert (event.actor_email, event.ip) == (admin.email, "127.0.0.1")


async def test_any_account_gets_a_token_and_each_endpoint_checks_permissions(
    client: httpx.AsyncClient, site: SiteFactory, issuance: None
) -> None:
    plain = await site.account()  # no site role: not even the baseline permission
    response = await sign_in(client, plain.email)
    assert response.status_code == 200
    bearer = {"Authorization": f"Bearer {response.json()['data']['id_token']}"}
    denied = await client.get(url("/openapi.json"), headers=bearer)
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'access marketplace admin api'"


async def test_failures_are_uniform(
    client: httpx.AsyncClient, site: SiteFactory, database: Database, issuance: None
) -> None:
    active = await site.account("marketplace_admin")
    blocked = await site.account("marketplace_admin", status=AccountStatus.BLOCKED)
    pending = await site.account(status=AccountStatus.PENDING)
    rejected = await site.account(status=AccountStatus.REJECTED)
    async with database.session() as session, session.begin():
        invited = User(id=uuid.uuid4(), email="invited@example.com", status=AccountStatus.INVITED)
        session.add(invited)
    responses = [
        await sign_in(client, "nobody@example.com"),
        await sign_in(client, active.email, "not the password"),
        await sign_in(client, blocked.email),
        await sign_in(client, pending.email),
        await sign_in(client, rejected.email),
        await sign_in(client, invited.email, "anything at all"),
        await sign_in(client, "not an email"),
    ]
    first = responses[0]
    assert first.status_code == 401
    assert first.json() == {
        "type": "/problems/unauthorized",
        "title": "Unauthorized",
        "status": 401,
        "detail": "invalid email or password",
    }
    for response in responses:
        assert response.status_code == first.status_code
        assert response.content == first.content
        assert response.headers["content-type"] == "application/problem+json"
        assert response.headers["www-authenticate"] == "Bearer"
    assert TEST_PASSWORD not in first.text
    async with database.session() as session:
        stamped = await session.scalars(select(User).where(User.last_login_at.is_not(None)))
        assert list(stamped) == []  # no failure touched an account


async def test_malformed_bodies_are_400_naming_the_field(
    client: httpx.AsyncClient, issuance: None
) -> None:
    cases = {
        "/password": {"email": "a@example.com"},
        "/email": {"email": 7, "password": "x"},
        "/extra": {"email": "a@example.com", "password": "x", "extra": 1},
    }
    for pointer, body in cases.items():
        response = await client.post(url("/auth/token"), json=body)
        assert response.status_code == 400, body
        assert response.json()["errors"][0]["pointer"] == pointer


async def test_an_outdated_password_hash_is_upgraded_at_sign_in(
    client: httpx.AsyncClient, database: Database, issuance: None
) -> None:
    weak = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash(TEST_PASSWORD)
    assert needs_rehash(weak)
    async with database.session() as session, session.begin():
        user = User(id=uuid.uuid4(), email="old@example.com", password_hash=weak)
        session.add(user)
    assert (await sign_in(client, "old@example.com")).status_code == 200
    async with database.session() as session:
        stored = await session.get(User, user.id)
        assert stored is not None and stored.password_hash is not None
        assert stored.password_hash != weak and not needs_rehash(stored.password_hash)
    assert (await sign_in(client, "old@example.com")).status_code == 200


async def test_issuance_is_disabled_until_the_web_api_key_is_set(
    client: httpx.AsyncClient,
    site: SiteFactory,
    database: Database,
    settings: Settings,
    make_app: AppMaker,
) -> None:
    account = await site.account()
    for response in (
        await sign_in(client, account.email),
        await refresh(client, "whatever"),
        await client.post(url("/auth/token"), json={}),  # even before the body is read
    ):
        assert response.status_code == 503
        problem = response.json()
        assert problem["type"] == "/problems/token-issuance-disabled"
        assert "portico admin-api set-web-api-key" in problem["detail"]
    # from the environment
    async with client_for(make_app(idp_web_api_key=SecretStr(WEB_API_KEY))) as configured:
        assert (await sign_in(configured, account.email)).status_code == 200
    # or stored by the operator
    await enable_issuance(database, settings)
    assert (await sign_in(client, account.email)).status_code == 200


async def test_the_web_api_key_is_stored_encrypted_and_audited(
    database: Database, settings: Settings, issuance: None
) -> None:
    box = secret_box(tuple(settings.signing_keys()))
    async with database.session() as session:
        row = await session.get(SiteSetting, auth_service.WEB_API_KEY)
        assert row is not None and row.secret
        assert WEB_API_KEY not in row.value
        assert await auth_service.read_web_api_key(session=session, box=box) == WEB_API_KEY
        event = await session.scalar(
            select(AuditEntry).where(AuditEntry.action == "site_setting.update")
        )
    assert event is not None and event.actor_kind == "test"
    assert WEB_API_KEY not in f"{event.summary}{event.before}{event.after}"
    for bad, why in (
        ("", "empty"),
        ("   ", "empty"),
        ("two words", "spaces"),
        ("x" * 1025, "longer"),
    ):
        with pytest.raises(ValueError, match=why):
            auth_service.check_web_api_key(bad)


def test_the_cli_sets_the_web_api_key(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A synchronous test: the command runs its own event loop.
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("PORTICO_ENVIRONMENT", "test")
    monkeypatch.setenv("PORTICO_DATABASE_URL", database_url)
    monkeypatch.setenv("PORTICO_SECRET_KEY", TEST_SECRET)
    monkeypatch.setenv("PORTICO_DATA_DIR", str(tmp_path))
    runner = CliRunner()
    refused = runner.invoke(cli_app, ["admin-api", "set-web-api-key", "--from-stdin"], input="\n")
    assert refused.exit_code == 2
    assert asyncio.run(_stored_key(database_url)) is None
    stdin = runner.invoke(
        cli_app, ["admin-api", "set-web-api-key", "--from-stdin"], input="first-key\n"
    )
    assert stdin.exit_code == 0, stdin.output
    assert "first-key" not in stdin.output
    assert asyncio.run(_stored_key(database_url)) == "first-key"
    prompted = runner.invoke(cli_app, ["admin-api", "set-web-api-key"], input=WEB_API_KEY + "\n")
    assert prompted.exit_code == 0, prompted.output
    assert WEB_API_KEY not in prompted.output  # the prompt does not echo it
    assert asyncio.run(_stored_key(database_url)) == WEB_API_KEY


async def _stored_key(database_url: str) -> str | None:
    database = Database(database_url)
    try:
        async with database.session() as session:
            return await auth_service.read_web_api_key(
                session=session, box=secret_box((TEST_SECRET,))
            )
    finally:
        await database.dispose()


async def test_openapi_describes_the_token_endpoints(
    client: httpx.AsyncClient, site: SiteFactory
) -> None:
    admin = await site.account(platform_admin=True)
    document = (await client.get(url("/openapi.json"), headers=admin.headers)).json()
    token = document["paths"]["/auth/token"]["post"]
    # email and password, or a SAML sign-in's one-time code
    assert token["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/AdminTokenRequest"
    )
    assert {"200", "400", "401", "429", "503"} <= set(token["responses"])
    assert "security" not in token
    assert "/auth/token/refresh" in document["paths"]
    read = document["components"]["schemas"]["TokenRead"]
    assert set(read["properties"]) == {"id_token", "refresh_token", "token_type", "expires_in"}
