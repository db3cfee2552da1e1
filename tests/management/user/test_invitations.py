"""The invitation flow over HTTP: invite → accept → sign in → act with the granted role."""

from __future__ import annotations

from datetime import timedelta

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from portico.core.account import User
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.management.user.models import Invitation
from tests.conftest import TEST_PASSWORD, Account, Factory, Org
from tests.management.user.support import RoleId

NEW_PASSWORD = "a long enough passphrase"


def url(org: Org, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/users{suffix}"


async def accept(client: httpx.AsyncClient, token: str, **extra: object) -> httpx.Response:
    return await client.post(
        "/api/auth/accept-invitation", json={"token": token, "password": NEW_PASSWORD, **extra}
    )


async def login(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await client.post("/api/auth/login", json={"email": email, "password": password})


async def test_invited_user_accepts_signs_in_and_acts_with_the_granted_role(
    client: httpx.AsyncClient, org: Org, admin: Account, role_id: RoleId, database: Database
) -> None:
    viewer_role = await role_id(org, "Viewer")
    invited = await client.post(
        url(org),
        json={"email": " New@Example.com ", "roleIds": [str(viewer_role)]},
        headers=admin.headers,
    )
    assert invited.status_code == 201, invited.text
    body = invited.json()
    assert body["email"] == "new@example.com"
    assert body["status"] == "invited"
    assert body["roleIds"] == [str(viewer_role)]
    assert body["roles"] == [{"id": str(viewer_role), "name": "Viewer"}]
    assert body["groupIds"] == []
    assert body["invitedAt"] is not None and body["createdAt"] is not None
    invitation = body["invitation"]
    token = invitation["token"]
    assert invitation["acceptUrl"] == f"http://testserver/console/accept-invitation#token={token}"
    assert invitation["expiresAt"]
    # the token is stored only as its hash, and never shown again
    async with database.session() as session:
        stored = await session.scalar(select(Invitation.token_hash))
        account = await session.scalar(select(User).where(User.email == "new@example.com"))
    assert stored is not None and token not in stored
    assert account is not None and account.password_hash is None
    got = await client.get(url(org, f"/{body['id']}"), headers=admin.headers)
    assert "invitation" not in got.json() and token not in got.text

    accepted = await accept(client, token, displayName="New Person")
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["token"] and accepted.json()["refreshToken"]
    assert (await accept(client, token)).status_code == 401  # single use

    signed_in = await login(client, "new@example.com", NEW_PASSWORD)
    assert signed_in.status_code == 200, signed_in.text
    headers = {"Authorization": f"Bearer {signed_in.json()['token']}"}
    assert (await client.get(f"/api/orgs/{org.id}/envs", headers=headers)).status_code == 200
    denied = await client.post(f"/api/orgs/{org.id}/envs", json={"name": "x"}, headers=headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'environment.manage'"

    member = (await client.get(url(org, f"/{body['id']}"), headers=admin.headers)).json()
    assert member["status"] == "active" and member["displayName"] == "New Person"
    again = await client.post(url(org, f"/{body['id']}/invitation"), headers=admin.headers)
    assert again.status_code == 409
    assert again.json()["detail"] == "user has already accepted"


async def test_expiry_and_reissue(
    client: httpx.AsyncClient, clock: Clock, org: Org, admin: Account
) -> None:
    first = await client.post(url(org), json={"email": "late@example.com"}, headers=admin.headers)
    assert first.status_code == 201, first.text
    user_id = first.json()["id"]
    old_token = first.json()["invitation"]["token"]

    reissued = await client.post(url(org, f"/{user_id}/invitation"), headers=admin.headers)
    assert reissued.status_code == 201, reissued.text
    assert set(reissued.json()) == {"token", "acceptUrl", "expiresAt"}
    second_token = reissued.json()["token"]
    assert second_token != old_token
    assert (await accept(client, old_token)).status_code == 401  # replaced

    clock.advance(timedelta(days=8))
    expired = await accept(client, second_token)
    assert expired.status_code == 401
    assert expired.json()["detail"] == "invalid or expired invitation"

    # Back to the present: the admin's token would be expired in 8 days, and a token issued
    # under the advanced clock has an "iat" in the future of the JWT library's own clock.
    clock.advance(timedelta(days=-8))
    third = await client.post(url(org, f"/{user_id}/invitation"), headers=admin.headers)
    assert third.status_code == 201, third.text
    assert (await accept(client, second_token)).status_code == 401  # replaced as well
    assert (await accept(client, third.json()["token"])).status_code == 200
    assert (await login(client, "late@example.com", NEW_PASSWORD)).status_code == 200


async def test_inviting_an_existing_account_keeps_its_password_and_name(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    elsewhere = await factory.org()
    existing = await factory.user(elsewhere, roles=("Viewer",), email="shared@example.com")
    invited = await client.post(
        url(org),
        json={"email": "Shared@Example.com", "displayName": "Renamed"},
        headers=admin.headers,
    )
    assert invited.status_code == 201, invited.text
    assert invited.json()["id"] == str(existing.id)
    # a membership made by an invitation is pending until the account's owner accepts it
    assert invited.json()["status"] == "invited"
    assert invited.json()["displayName"] == "shared"  # the account's own name is kept
    me = (await client.get("/api/me", headers=existing.headers)).json()
    assert [o["name"] for o in me["orgs"]] == [elsewhere.name]
    pending = await client.get(f"/api/orgs/{org.id}/envs", headers=existing.headers)
    assert pending.status_code == 404

    # the token alone does not accept for an existing account: the inviter saw it, and must
    # not be able to set the password of (and act as) someone else's account
    token = invited.json()["invitation"]["token"]
    hijack = await accept(client, token)  # with a password of the token holder's choice
    assert hijack.status_code == 401
    assert (await login(client, existing.email, NEW_PASSWORD)).status_code == 401

    owner = await client.post(
        "/api/auth/accept-invitation", json={"token": token, "password": TEST_PASSWORD}
    )
    assert owner.status_code == 200, owner.text
    assert (await login(client, existing.email, TEST_PASSWORD)).status_code == 200
    member = await client.get(url(org, f"/{existing.id}"), headers=admin.headers)
    assert member.json()["status"] == "active"

    twice = await client.post(url(org), json={"email": "shared@example.com"}, headers=admin.headers)
    assert twice.status_code == 409
    assert twice.json()["detail"] == "user is already a member of this organisation"
    # still a member of the other organisation, untouched
    me = (await client.get("/api/me", headers=existing.headers)).json()
    assert sorted(o["name"] for o in me["orgs"]) == sorted([org.name, elsewhere.name])


async def test_public_url_is_the_base_of_the_accept_link(
    client: httpx.AsyncClient, app: FastAPI, org: Org, admin: Account
) -> None:
    app.state.settings = app.state.settings.model_copy(
        update={"public_url": "https://console.example.com/"}
    )
    invited = await client.post(url(org), json={"email": "x@example.com"}, headers=admin.headers)
    invitation = invited.json()["invitation"]
    assert invitation["acceptUrl"] == (
        f"https://console.example.com/console/accept-invitation#token={invitation['token']}"
    )


async def test_another_orgs_invitation_gives_no_access_to_a_pending_membership(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    """Org A invites x@; before x accepts, org B's admin invites x@ too and accepts B's
    invitation with a password of their own. That sets x@'s password (the account had none),
    but A's membership is still pending: the intruder sees nothing of A."""
    invited = await client.post(url(org), json={"email": "x@example.com"}, headers=admin.headers)
    assert invited.status_code == 201
    other = await factory.org()
    other_admin = await factory.user(other, roles=("Administrator",))
    theirs = await client.post(
        f"/api/orgs/{other.id}/users", json={"email": "x@example.com"}, headers=other_admin.headers
    )
    intruder = await accept(client, theirs.json()["invitation"]["token"])
    assert intruder.status_code == 200
    headers = {"Authorization": f"Bearer {intruder.json()['token']}"}
    assert (await client.get(f"/api/orgs/{org.id}/envs", headers=headers)).status_code == 404
    me = (await client.get("/api/me", headers=headers)).json()
    assert [o["id"] for o in me["orgs"]] == [str(other.id)]
    # and A's token, without the account's password, does not complete A's membership
    again = await accept(client, invited.json()["invitation"]["token"], password="guess-" * 3)
    assert again.status_code == 401
