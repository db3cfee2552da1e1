"""``POST /api/portal/v1/registrations``: public self-registration creating pending
accounts, with the same answer whether or not the address is already registered."""

from __future__ import annotations

import httpx

from portico.core.account import AccountStatus, User
from portico.core.audit import AuditEntry
from portico.core.passwords import verify_password
from tests.conftest import TEST_PASSWORD
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.users.conftest import Rows

REGISTRATIONS = "/api/portal/v1/registrations"
PASSWORD = "a long enough passphrase"
ACCEPTED = {"data": {"status": "pending"}}


async def register(client: httpx.AsyncClient, **body: object) -> httpx.Response:
    return await client.post(REGISTRATIONS, json=body)


async def test_registration_creates_a_pending_account(
    client: httpx.AsyncClient, site_admin: SiteAccount, rows: Rows
) -> None:
    response = await register(
        client, email="  Ada@Example.COM ", password=PASSWORD, display_name=" Ada "
    )
    assert response.status_code == 202, response.text
    assert response.json() == ACCEPTED
    [user] = await rows(User, User.email == "ada@example.com")
    assert user.status is AccountStatus.PENDING and user.display_name == "Ada"
    assert user.password_hash is not None and user.password_hash.startswith("$argon2id$")
    assert verify_password(user.password_hash, PASSWORD)
    assert not user.can_sign_in and not user.is_platform_admin
    [event] = await rows(AuditEntry, AuditEntry.action == "user.register")
    assert event.surface == "marketplace" and event.module == "user"
    assert event.actor_kind == "anonymous" and event.actor_id is None
    assert event.entity_id == str(user.id) and event.after["status"] == "pending"
    assert event.ip == "127.0.0.1"
    assert PASSWORD not in str(event.after)

    # an administrator sees it waiting and approves it; then it can sign in
    pending = await client.get(url("/users/pending"), headers=site_admin.headers)
    assert [u["email"] for u in pending.json()["data"]] == ["ada@example.com"]
    approved = await client.post(url(f"/users/{user.id}/approve"), headers=site_admin.headers)
    assert approved.status_code == 200
    [user] = await rows(User, User.id == user.id)
    assert user.can_sign_in


async def test_an_existing_address_gets_the_same_answer(
    client: httpx.AsyncClient, site: SiteFactory, rows: Rows
) -> None:
    existing = await site.account(email="taken@example.com")
    [before] = await rows(User, User.id == existing.id)
    response = await register(
        client, email="TAKEN@example.com", password=PASSWORD, display_name="Someone else"
    )
    assert response.status_code == 202 and response.json() == ACCEPTED
    [after] = await rows(User, User.email == "taken@example.com")
    assert after.password_hash == before.password_hash and after.display_name == "taken"
    assert after.status is AccountStatus.ACTIVE
    assert verify_password(after.password_hash, TEST_PASSWORD)

    first = await register(client, email="twice@example.com", password=PASSWORD, display_name="A")
    second = await register(client, email="twice@example.com", password="x" * 20, display_name="B")
    assert first.json() == second.json() == ACCEPTED
    [twice] = await rows(User, User.email == "twice@example.com")
    assert twice.display_name == "A" and verify_password(twice.password_hash, PASSWORD)
    assert len(await rows(AuditEntry, AuditEntry.action == "user.register")) == 1


async def test_bad_registrations_are_400_naming_the_field(
    client: httpx.AsyncClient, rows: Rows
) -> None:
    good = {"email": "ok@example.com", "password": PASSWORD, "display_name": "Ok"}
    short = "elevenchars"
    for change, pointer in (
        ({"password": short}, "/password"),
        ({"password": 123456789012}, "/password"),
        ({"password": "x" * 1025}, "/password"),
        ({"email": "not-an-email"}, "/email"),
        ({"email": "a@b"}, "/email"),
        ({"display_name": "  "}, "/display_name"),
        ({"display_name": "x" * 201}, "/display_name"),
        ({"role": "administrator"}, "/role"),
        ({"email": None}, "/email"),
    ):
        response = await register(client, **{**good, **change})
        assert response.status_code == 400, change
        assert response.headers["content-type"] == "application/problem+json"
        errors = response.json()["errors"]
        assert [e["pointer"] for e in errors] == [pointer], change
        assert short not in response.text
    too_short = await register(client, **{**good, "password": short})
    assert too_short.json()["errors"][0]["detail"] == (
        "$.password: must be at least 12 characters long"
    )
    for missing in good:
        body = {k: v for k, v in good.items() if k != missing}
        response = await register(client, **body)
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"pointer": f"/{missing}", "detail": f"required property '{missing}' not found"}
        ]
    not_json = await client.post(
        REGISTRATIONS, content=b"email=x", headers={"content-type": "text/plain"}
    )
    assert not_json.status_code in (400, 415)
    assert await rows(User) == []
