"""Service accounts over HTTP: the token shown once, authenticating like a user's with its
roles' permissions, revoked by DELETE, refused once expired; bad input, grants, tenancy,
audit."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.management.role.permissions import PREDEFINED_ROLES
from portico.management.service_account.models import ServiceAccount
from tests.conftest import Account, Factory, Org


def url(org: Org, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/service-accounts{suffix}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def role_ids(client: httpx.AsyncClient, org: Org, who: Account) -> dict[str, str]:
    listed = (await client.get(f"/api/orgs/{org.id}/roles?size=100", headers=who.headers)).json()
    return {r["name"]: r["id"] for r in listed["items"]}


async def create(
    client: httpx.AsyncClient, org: Org, who: Account, **body: object
) -> httpx.Response:
    return await client.post(url(org), json=body, headers=who.headers)


async def integration(
    client: httpx.AsyncClient, org: Org, admin: Account, **extra: object
) -> dict[str, Any]:
    roles = await role_ids(client, org, admin)
    created = await create(
        client, org, admin, name="portico connector", roleIds=[roles["Integration"]], **extra
    )
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body


async def entries(client: httpx.AsyncClient, org: Org, who: Account, **query: str) -> list[Any]:
    log = await client.get(f"/api/orgs/{org.id}/audit-log", params=query, headers=who.headers)
    assert log.status_code == 200, log.text
    items: list[Any] = log.json()["items"]
    return items


def test_the_integration_role_grants_what_a_connector_needs() -> None:
    _, permissions = PREDEFINED_ROLES["Integration"]
    assert permissions == {
        "api.read",
        "product.read",
        "product.manage",  # an API's implied product, made by the marketplace's connector
        "analytics.read",
        "developer.read",
        "developer.manage",
    }


async def test_the_token_is_shown_once_and_acts_with_its_roles_permissions(
    client: httpx.AsyncClient, org: Org, admin: Account, database: Database
) -> None:
    created = await integration(client, org, admin)
    token = created.pop("token")
    assert token.startswith("psa_") and len(token) > 40
    assert created["name"] == "portico connector"
    assert created["orgId"] == str(org.id)
    assert created["expiresAt"] is None and created["lastUsedAt"] is None
    # only its SHA-256 is stored; no read shows the token again
    async with database.session() as session:
        row = await session.scalar(
            select(ServiceAccount).where(ServiceAccount.id == uuid.UUID(created["id"]))
        )
        assert row is not None
        assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
    one = await client.get(url(org, f"/{created['id']}"), headers=admin.headers)
    listed = await client.get(url(org), headers=admin.headers)
    for response in (one, listed):
        assert response.status_code == 200
        assert token not in response.text and "token" not in response.text.lower()
    assert one.json() == created
    assert [a["id"] for a in listed.json()["items"]] == [created["id"]]

    # with the Integration role: APIs may be read, environments not changed, consumers not read
    apis = await client.get(f"/api/orgs/{org.id}/apis", headers=bearer(token))
    assert apis.status_code == 200, apis.text
    denied = await client.post(
        f"/api/orgs/{org.id}/envs", json={"name": "prod"}, headers=bearer(token)
    )
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'environment.manage'"
    consumers = await client.get(f"/api/orgs/{org.id}/consumers", headers=bearer(token))
    assert consumers.status_code == 403
    assert consumers.json()["detail"] == "missing permission 'consumer.read'"
    # its use is recorded, whatever the answer
    used = (await client.get(url(org, f"/{created['id']}"), headers=admin.headers)).json()
    assert used["lastUsedAt"] is not None
    assert used["updatedAt"] == created["updatedAt"]  # a use is not a change
    # what only people do
    me = await client.get("/api/me", headers=bearer(token))
    assert me.status_code == 403
    assert (await client.get("/api/orgs", headers=bearer(token))).status_code == 403


async def test_another_organisation_is_not_found_and_a_wrong_token_is_refused(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    token = (await integration(client, org, admin))["token"]
    other = await factory.org("Other")
    response = await client.get(f"/api/orgs/{other.id}/apis", headers=bearer(token))
    assert response.status_code == 404
    for wrong in ("psa_" + "x" * 43, token + "x", token[:-1]):
        refused = await client.get(f"/api/orgs/{org.id}/apis", headers=bearer(wrong))
        assert refused.status_code == 401
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.json()["detail"] == "invalid token"


async def test_patch_changes_roles_and_changes_made_with_the_token_are_audited(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    created = await integration(client, org, admin)
    token, account_id = created["token"], created["id"]
    ops = await client.post(
        f"/api/orgs/{org.id}/roles",
        json={"name": "Env ops", "permissions": ["environment.manage", "environment.read"]},
        headers=admin.headers,
    )
    assert ops.status_code == 201, ops.text
    patched = await client.patch(
        url(org, f"/{account_id}"),
        json={"roleIds": [ops.json()["id"]], "name": "ci"},
        headers=admin.headers,
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["roleIds"] == [ops.json()["id"]]
    assert patched.json()["name"] == "ci"
    assert "token" not in patched.json()

    env = await client.post(
        f"/api/orgs/{org.id}/envs", json={"name": "staging"}, headers=bearer(token)
    )
    assert env.status_code == 201, env.text
    apis = await client.get(f"/api/orgs/{org.id}/apis", headers=bearer(token))
    assert apis.status_code == 403  # the Integration role was replaced
    (entry,) = await entries(client, org, admin, entityType="environment")
    assert entry["action"] == "environment.create"
    assert entry["actor"] == {"id": account_id, "email": None, "kind": "service_account"}

    audited = await entries(client, org, admin, entityType="service_account")
    assert [e["action"] for e in audited] == ["service_account.update", "service_account.create"]
    update = audited[0]
    assert update["before"]["name"] == "portico connector" and update["after"]["name"] == "ci"
    assert update["after"]["roleIds"] == [ops.json()["id"]]
    assert update["actor"]["email"] == admin.email
    assert token not in json.dumps(audited)


async def test_delete_revokes_the_token(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    created = await integration(client, org, admin)
    token = created["token"]
    assert (await client.get(f"/api/orgs/{org.id}/apis", headers=bearer(token))).status_code == 200
    deleted = await client.delete(url(org, f"/{created['id']}"), headers=admin.headers)
    assert deleted.status_code == 204
    refused = await client.get(f"/api/orgs/{org.id}/apis", headers=bearer(token))
    assert refused.status_code == 401
    assert (await client.get(url(org, f"/{created['id']}"), headers=admin.headers)).status_code == (
        404
    )
    again = await client.delete(url(org, f"/{created['id']}"), headers=admin.headers)
    assert again.status_code == 404
    (entry,) = await entries(client, org, admin, action="service_account.delete")
    assert entry["before"]["name"] == "portico connector"
    assert token not in json.dumps(entry)


async def test_an_expired_token_is_refused(
    client: httpx.AsyncClient, org: Org, admin: Account, clock: Clock
) -> None:
    expires = clock.now() + timedelta(minutes=10)
    created = await integration(client, org, admin, expiresAt=expires.isoformat())
    token = created["token"]
    assert datetime.fromisoformat(created["expiresAt"]) == expires
    assert (await client.get(f"/api/orgs/{org.id}/apis", headers=bearer(token))).status_code == 200
    clock.advance(timedelta(minutes=11))
    expired = await client.get(f"/api/orgs/{org.id}/apis", headers=bearer(token))
    assert expired.status_code == 401
    assert expired.json()["detail"] == "token expired"
    # an expiry in the past is refused; removing it revives the token
    past = await client.patch(
        url(org, f"/{created['id']}"),
        json={"expiresAt": (clock.now() - timedelta(seconds=1)).isoformat()},
        headers=admin.headers,
    )
    assert past.status_code == 400
    assert past.json()["errors"] == [
        {"pointer": "/expiresAt", "detail": "$.expiresAt: must be in the future"}
    ]
    revived = await client.patch(
        url(org, f"/{created['id']}"), json={"expiresAt": None}, headers=admin.headers
    )
    assert revived.status_code == 200 and revived.json()["expiresAt"] is None
    assert (await client.get(f"/api/orgs/{org.id}/apis", headers=bearer(token))).status_code == 200


async def test_nobody_grants_a_role_they_do_not_hold(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    people = await client.post(
        f"/api/orgs/{org.id}/roles",
        json={"name": "People", "permissions": ["user.manage", "user.read", "role.read"]},
        headers=admin.headers,
    )
    assert people.status_code == 201, people.text
    manager = await factory.user(org, roles=("People",))
    roles = await role_ids(client, org, admin)
    refused = await create(client, org, manager, name="x", roleIds=[roles["Integration"]])
    assert refused.status_code == 403
    assert refused.json()["detail"].startswith("cannot grant permissions you do not hold: ")
    assert "developer.manage" in refused.json()["detail"]
    own = await create(client, org, manager, name="x", roleIds=[roles["People"]])
    assert own.status_code == 201, own.text
    raised = await client.patch(
        url(org, f"/{own.json()['id']}"),
        json={"roleIds": [roles["People"], roles["Integration"]]},
        headers=manager.headers,
    )
    assert raised.status_code == 403
    # and a service account holding user.manage is bound by the same rule
    token = own.json()["token"]
    by_token = await client.post(
        url(org), json={"name": "y", "roleIds": [roles["Integration"]]}, headers=bearer(token)
    )
    assert by_token.status_code == 403
    viewer = await factory.user(org, roles=("Viewer",))
    denied = await create(client, org, viewer, name="z", roleIds=[])
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'user.manage'"
    listed = await client.get(url(org), headers=viewer.headers)  # user.read
    assert listed.status_code == 200


NUL = "\u0000"


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"roleIds": []}, "/name"),
        ({"name": "a"}, "/roleIds"),
        ({"name": "", "roleIds": []}, "/name"),
        ({"name": " padded ", "roleIds": []}, "/name"),
        ({"name": "x" * 101, "roleIds": []}, "/name"),
        ({"name": 5, "roleIds": []}, "/name"),
        ({"name": f"a{NUL}b", "roleIds": []}, "/name"),
        ({"name": "a", "roleIds": "all"}, "/roleIds"),
        ({"name": "a", "roleIds": ["not-a-uuid"]}, "/roleIds/0"),
        ({"name": "a", "roleIds": [str(uuid.uuid4())]}, "/roleIds/0"),
        ({"name": "a", "roleIds": [], "expiresAt": "tomorrow"}, "/expiresAt"),
        ({"name": "a", "roleIds": [], "expiresAt": "2999-01-01T00:00:00"}, "/expiresAt"),
        ({"name": "a", "roleIds": [], "expiresAt": "2001-01-01T00:00:00Z"}, "/expiresAt"),
        ({"name": "a", "roleIds": [], "expiresAt": 1}, "/expiresAt"),
        ({"name": "a", "roleIds": [], "token": "psa_mine"}, "/token"),
    ],
)
async def test_bad_input_is_a_400_naming_the_field(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    body: dict[str, Any],
    pointer: str,
) -> None:
    response = await client.post(url(org), json=body, headers=admin.headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert pointer in [e["pointer"] for e in response.json()["errors"]]
    assert (await client.get(url(org), headers=admin.headers)).json()["total"] == 0


async def test_duplicates_and_unknown_ids(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    roles = await role_ids(client, org, admin)
    twice = await create(client, org, admin, name="a", roleIds=[roles["Viewer"]] * 2)
    assert twice.status_code == 400
    assert twice.json()["errors"][0]["pointer"] == "/roleIds/1"
    other = await factory.org("Elsewhere")
    other_admin = await factory.user(other, roles=("Administrator",))
    foreign = (await role_ids(client, other, other_admin))["Viewer"]
    cross = await create(client, org, admin, name="a", roleIds=[foreign])
    assert cross.status_code == 400
    assert cross.json()["errors"] == [
        {"pointer": "/roleIds/0", "detail": "$.roleIds[0]: unknown role"}
    ]
    assert (await create(client, org, admin, name="a", roleIds=[])).status_code == 201
    taken = await create(client, org, admin, name="a", roleIds=[])
    assert taken.status_code == 409
    assert taken.json()["detail"] == "a service account named 'a' already exists"
    for path in ("/not-a-uuid", f"/{uuid.uuid4()}"):
        assert (await client.get(url(org, path), headers=admin.headers)).status_code == 404
    # another organisation's account is not found from here
    theirs = await create(client, other, other_admin, name="theirs", roleIds=[])
    missing = await client.get(url(org, f"/{theirs.json()['id']}"), headers=admin.headers)
    assert missing.status_code == 404
    bad_patch = await client.patch(
        url(org, f"/{theirs.json()['id']}"), json={"name": "x"}, headers=admin.headers
    )
    assert bad_patch.status_code == 404
    listing = await client.get(url(org) + "?colour=red", headers=admin.headers)
    assert listing.status_code == 400
    assert listing.json()["errors"][0]["parameter"] == "colour"


async def test_an_account_without_roles_may_do_nothing(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    created = await create(client, org, admin, name="idle", roleIds=[])
    token = created.json()["token"]
    response = await client.get(f"/api/orgs/{org.id}/apis", headers=bearer(token))
    assert response.status_code == 403
    assert response.json()["detail"] == "missing permission 'api.read'"
    # a refused request is a use too (recorded in a transaction of its own)
    used = await client.get(url(org, f"/{created.json()['id']}"), headers=admin.headers)
    assert used.json()["lastUsedAt"] is not None
    # membership-only endpoints: the organisation itself
    own = await client.get(f"/api/orgs/{org.id}", headers=bearer(token))
    assert own.status_code == 200 and own.json()["id"] == str(org.id)
