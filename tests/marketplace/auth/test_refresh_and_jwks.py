"""Refresh-token rotation with reuse detection, and ID tokens verified against the public JWKS."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import jwt
import pytest
from sqlalchemy import select

from portico.core.account import AccountStatus, User
from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.core.refresh import RefreshToken
from tests.conftest import TEST_PASSWORD
from tests.marketplace.auth.conftest import refresh, sign_in
from tests.marketplace.conftest import SiteFactory, url

JWKS = "/api/portal/v1/.well-known/jwks.json"


async def tokens_of(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def test_refresh_rotates_and_reuse_revokes_the_family(
    client: httpx.AsyncClient, site: SiteFactory, database: Database, issuance: None
) -> None:
    admin = await site.account(platform_admin=True)
    first = await tokens_of(await sign_in(client, admin.email))
    second = await tokens_of(await refresh(client, first["refresh_token"]))
    assert second["refresh_token"] != first["refresh_token"]
    assert second["id_token"] != first["id_token"] and second["expires_in"] == 3600
    bearer = {"Authorization": f"Bearer {second['id_token']}"}
    assert (await client.get(url("/openapi.json"), headers=bearer)).status_code == 200
    third = await tokens_of(await refresh(client, second["refresh_token"]))

    reused = await refresh(client, first["refresh_token"])  # stolen, or a broken client
    assert reused.status_code == 401
    assert reused.json()["detail"] == "invalid refresh token"
    # the revocation outlived the failed request: the latest token is dead too
    assert (await refresh(client, third["refresh_token"])).status_code == 401
    # a new sign-in starts a new family
    fresh = await tokens_of(await sign_in(client, admin.email))
    assert (await refresh(client, fresh["refresh_token"])).status_code == 200
    async with database.session() as session:
        families = {
            row.family_id: row.revoked_at is not None
            for row in await session.scalars(select(RefreshToken))
        }
    assert sorted(families.values()) == [False, True]


async def test_refreshes_and_reuse_are_audited(
    client: httpx.AsyncClient, site: SiteFactory, database: Database, issuance: None
) -> None:
    account = await site.account("marketplace_admin")
    first = await tokens_of(await sign_in(client, account.email))
    refreshed = await refresh(client, first["refresh_token"])
    second = await tokens_of(refreshed)
    reused = await client.post(
        url("/auth/token/refresh"),
        json={"refresh_token": first["refresh_token"]},
        headers={"X-Request-Id": "reuse-1"},
    )
    assert reused.status_code == 401
    assert (await refresh(client, second["refresh_token"])).status_code == 401  # revoked
    async with database.session() as session:
        events = {
            row.action: row
            for row in await session.scalars(
                select(AuditEntry).where(
                    AuditEntry.action.in_(["auth.refresh", "auth.refresh_reuse"])
                )
            )
        }
    rotation = events["auth.refresh"]
    assert (rotation.actor_id, rotation.actor_email) == (account.id, account.email)
    assert rotation.entity_type == "user" and rotation.entity_id == str(account.id)
    assert rotation.ip == "127.0.0.1" and rotation.request_id == refreshed.headers["x-request-id"]
    assert (rotation.surface, rotation.module) == ("marketplace", "admin_api")
    # committed although the request failed: whoever presented the token is unknown (the
    # thief or the owner), the account is the entity whose sign-in was cut off
    reuse = events["auth.refresh_reuse"]
    assert reuse.actor_kind == "anonymous" and reuse.actor_id is None
    assert reuse.entity_type == "user" and reuse.entity_id == str(account.id)
    assert reuse.ip == "127.0.0.1" and reuse.request_id == "reuse-1"
    assert (reuse.surface, reuse.module) == ("marketplace", "admin_api")
    assert "revoked" in reuse.summary


async def test_refresh_needs_an_account_that_can_still_sign_in(
    client: httpx.AsyncClient, site: SiteFactory, database: Database, issuance: None
) -> None:
    account = await site.account("marketplace_admin")
    tokens = await tokens_of(await sign_in(client, account.email))
    async with database.session() as session, session.begin():
        user = await session.get(User, account.id)
        assert user is not None
        user.status = AccountStatus.BLOCKED
    refused = await refresh(client, tokens["refresh_token"])
    assert refused.status_code == 401
    assert refused.json()["detail"] == "invalid refresh token"
    async with database.session() as session, session.begin():
        user = await session.get(User, account.id)
        assert user is not None
        user.status = AccountStatus.ACTIVE
    # unblocking does not bring the old sign-in back: its family was revoked
    assert (await refresh(client, tokens["refresh_token"])).status_code == 401


async def test_bad_refresh_bodies(client: httpx.AsyncClient, issuance: None) -> None:
    missing = await client.post(url("/auth/token/refresh"), json={})
    assert missing.status_code == 400
    assert missing.json()["errors"][0]["pointer"] == "/refresh_token"
    unknown = await refresh(client, "x" * 43)
    assert unknown.status_code == 401 and unknown.json()["detail"] == "invalid refresh token"


async def test_id_tokens_verify_against_the_published_jwks(
    client: httpx.AsyncClient, site: SiteFactory, issuance: None
) -> None:
    empty = await client.get(JWKS)  # no token signed yet
    assert empty.status_code == 200 and empty.json() == {"keys": []}
    account = await site.account()  # signs its token: the key is made on first use
    tokens = await tokens_of(await sign_in(client, account.email))
    response = await client.get(JWKS)  # public: no credentials
    assert response.status_code == 200
    assert "max-age" in response.headers["cache-control"]
    keys = response.json()["keys"]
    assert len(keys) == 1
    assert keys[0]["kty"] == "EC" and keys[0]["alg"] == "ES256" and keys[0]["use"] == "sig"
    assert "d" not in keys[0]  # the private half never leaves the store
    key_set = jwt.PyJWKSet.from_dict(response.json())
    kid = jwt.get_unverified_header(tokens["id_token"])["kid"]
    public = next(k for k in key_set.keys if k.key_id == kid)
    claims = jwt.decode(
        tokens["id_token"], public.key, algorithms=["ES256"], audience="portico-marketplace"
    )
    assert claims["sub"] == str(account.id)
    assert claims["iss"].endswith("/api/admin/v1")
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(
            tokens["id_token"][:-6]
            + ("AAAAAA" if not tokens["id_token"].endswith("AAAAAA") else "BBBBBB"),
            public.key,
            algorithms=["ES256"],
            audience="portico-marketplace",
        )


async def test_credentials_and_tokens_never_reach_logs_audit_or_errors(
    client: httpx.AsyncClient,
    site: SiteFactory,
    database: Database,
    issuance: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    account = await site.account(platform_admin=True)
    secrets_seen: list[str] = [TEST_PASSWORD, "a wrong password 12345"]
    failed = await sign_in(client, account.email, secrets_seen[1])
    first = await tokens_of(await sign_in(client, account.email))
    second = await tokens_of(await refresh(client, first["refresh_token"]))
    reused = await refresh(client, first["refresh_token"])
    secrets_seen += [first["id_token"], first["refresh_token"]]
    secrets_seen += [second["id_token"], second["refresh_token"]]
    bearer = {"Authorization": f"Bearer {second['id_token']}"}
    assert (await client.get(url("/openapi.json"), headers=bearer)).status_code == 200
    async with database.session() as session:
        rows = list(await session.scalars(select(AuditEntry)))
    assert any(row.action == "auth.sign_in" for row in rows)
    stored = json.dumps(
        [{c.key: str(getattr(row, c.key)) for c in AuditEntry.__table__.columns} for row in rows]
    )
    for secret in secrets_seen:
        assert secret not in caplog.text
        assert secret not in stored
        for error in (failed, reused):
            assert secret not in error.text
    assert any("family revoked" in record.getMessage() for record in caplog.records)
