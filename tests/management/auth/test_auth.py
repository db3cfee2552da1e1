"""Sign-in, refresh rotation and reuse detection, token expiry, and /api/me."""

from __future__ import annotations

from datetime import timedelta

import httpx
import jwt
import pytest
from sqlalchemy import select

from portico.core.audit import AuditEntry
from portico.core.clock import Clock
from portico.core.db.engine import Database
from tests.conftest import TEST_PASSWORD, Account, Factory, Org


async def login(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await client.post("/api/auth/login", json={"email": email, "password": password})


async def test_login_returns_a_one_hour_token_that_works(
    client: httpx.AsyncClient, admin: Account, clock: Clock
) -> None:
    response = await login(client, "ADMIN@acme.example.com", TEST_PASSWORD)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"token", "refreshToken", "expiresAt", "tokenType"}
    header = jwt.get_unverified_header(body["token"])
    assert header["alg"] == "HS256" and header["kid"]
    claims = jwt.decode(body["token"], options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 3600
    me = await client.get("/api/me", headers={"Authorization": f"Bearer {body['token']}"})
    assert me.status_code == 200
    assert me.json()["email"] == "admin@acme.example.com"


async def test_failures_are_uniform(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    from portico.core.account import AccountStatus

    blocked = await factory.user(org, roles=("Viewer",), status=AccountStatus.BLOCKED)
    wrong_password = await login(client, admin.email, "not the password")
    unknown = await login(client, "nobody@example.com", TEST_PASSWORD)
    blocked_login = await login(client, blocked.email, TEST_PASSWORD)
    for response in (wrong_password, unknown, blocked_login):
        assert response.status_code == 401
        assert response.json() == wrong_password.json()
        assert response.json()["detail"] == "invalid email or password"


async def test_expired_token_is_401_token_expired(
    client: httpx.AsyncClient, admin: Account, org: Org, clock: Clock
) -> None:
    url = f"/api/orgs/{org.id}/envs"
    assert (await client.get(url, headers=admin.headers)).status_code == 200
    # exp is whole seconds: keep clear of the second the token was issued in
    clock.advance(timedelta(minutes=59))
    assert (await client.get(url, headers=admin.headers)).status_code == 200
    clock.advance(timedelta(minutes=1, seconds=1))
    expired = await client.get(url, headers=admin.headers)
    assert expired.status_code == 401
    assert expired.json()["detail"] == "token expired"
    assert expired.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "authorization",
    ["", "Bearer", "Bearer ", "Basic abc", "Bearer not-a-jwt", "Bearer a.b.c"],
)
async def test_missing_or_malformed_token_is_401(
    client: httpx.AsyncClient, org: Org, authorization: str
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = await client.get(f"/api/orgs/{org.id}/envs", headers=headers)
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"


async def test_forged_and_foreign_tokens_are_refused(
    client: httpx.AsyncClient, admin: Account, org: Org
) -> None:
    claims = jwt.decode(admin.token, options={"verify_signature": False})
    header = jwt.get_unverified_header(admin.token)
    forged = jwt.encode(
        claims, "another-key-" * 4, algorithm="HS256", headers={"kid": header["kid"]}
    )
    unsigned = jwt.encode(claims, None, algorithm="none", headers={"kid": header["kid"]})  # type: ignore[arg-type]
    for token in (forged, unsigned):
        response = await client.get(
            f"/api/orgs/{org.id}/envs", headers={"Authorization": f"Bearer {token}"}
        )
        assert response.status_code == 401


async def test_refresh_rotates_and_reuse_revokes_the_family(
    client: httpx.AsyncClient, admin: Account
) -> None:
    first = (await login(client, admin.email, TEST_PASSWORD)).json()
    second = await client.post("/api/auth/refresh", json={"refreshToken": first["refreshToken"]})
    assert second.status_code == 200, second.text
    rotated = second.json()
    assert rotated["refreshToken"] != first["refreshToken"]
    me = await client.get("/api/me", headers={"Authorization": f"Bearer {rotated['token']}"})
    assert me.status_code == 200

    # the first refresh token was used: presenting it again revokes the whole family ...
    reused = await client.post("/api/auth/refresh", json={"refreshToken": first["refreshToken"]})
    assert reused.status_code == 401
    # ... including the successor that had not been used yet
    successor = await client.post(
        "/api/auth/refresh", json={"refreshToken": rotated["refreshToken"]}
    )
    assert successor.status_code == 401
    # a fresh sign-in starts a new family
    fresh = (await login(client, admin.email, TEST_PASSWORD)).json()
    assert (
        await client.post("/api/auth/refresh", json={"refreshToken": fresh["refreshToken"]})
    ).status_code == 200


async def test_refresh_token_expires(
    client: httpx.AsyncClient, admin: Account, clock: Clock
) -> None:
    tokens = (await login(client, admin.email, TEST_PASSWORD)).json()
    clock.advance(timedelta(days=31))
    response = await client.post("/api/auth/refresh", json={"refreshToken": tokens["refreshToken"]})
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({}, "/email"),
        ({"email": "a@example.com"}, "/password"),
        ({"email": 1, "password": "x"}, "/email"),
        ({"email": "a@example.com", "password": "x", "remember": True}, "/remember"),
        ({"email": "a\u0000@example.com", "password": "x"}, "/email"),
    ],
)
async def test_login_bad_input(
    client: httpx.AsyncClient, body: dict[str, object], pointer: str
) -> None:
    response = await client.post("/api/auth/login", json=body)
    assert response.status_code == 400
    assert pointer in [e["pointer"] for e in response.json()["errors"]]


async def test_login_is_audited_and_never_logs_the_password(
    client: httpx.AsyncClient,
    admin: Account,
    database: Database,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("DEBUG")
    response = await login(client, admin.email, TEST_PASSWORD)
    await login(client, admin.email, "wrong-" + TEST_PASSWORD)
    token = response.json()["token"]
    async with database.session() as session:
        entries = list(
            await session.scalars(select(AuditEntry).where(AuditEntry.action == "auth.login"))
        )
    assert len(entries) == 1
    assert entries[0].ip == "127.0.0.1"
    assert TEST_PASSWORD not in caplog.text
    assert token not in caplog.text


async def test_me_lists_orgs_roles_and_effective_permissions(
    client: httpx.AsyncClient, viewer: Account, org: Org
) -> None:
    me = (await client.get("/api/me", headers=viewer.headers)).json()
    assert me["isPlatformAdmin"] is False
    assert [o["id"] for o in me["orgs"]] == [str(org.id)]
    assert me["orgs"][0]["roles"] == ["Viewer"]
    assert "environment.read" in me["orgs"][0]["permissions"]
    assert "environment.manage" not in me["orgs"][0]["permissions"]
