"""Consumers over HTTP: success, credentials kept secret, bad input, conflicts, permissions,
tenancy, audit, and a new config version for every environment of the org on each change."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from portico.core.db.engine import Database
from portico.core.logging import REDACTED
from portico.management.app.snapshot import snapshot_consumers
from portico.management.consumer.credentials import MASK, SecretBox, verify_password_hash
from portico.management.consumer.models import Consumer
from tests.conftest import TEST_SECRET, Account, Factory, Org

JWT_SECRET = "jwt-hmac-secret-of-at-least-32-bytes!"
LIMIT = {"count": 10, "time_window": 60}


def url(org: Org, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/consumers{suffix}"


async def create(
    client: httpx.AsyncClient, org: Org, who: Account, **body: object
) -> httpx.Response:
    return await client.post(url(org), json=body, headers=who.headers)


async def patch(
    client: httpx.AsyncClient, org: Org, who: Account, consumer_id: str, **body: object
) -> httpx.Response:
    return await client.patch(url(org, f"/{consumer_id}"), json=body, headers=who.headers)


async def stored(database: Database, username: str) -> dict[str, Any]:
    async with database.session() as session:
        consumer = await session.scalar(select(Consumer).where(Consumer.username == username))
        assert consumer is not None
        return dict(consumer.plugins)


async def count(database: Database) -> int:
    async with database.session() as session:
        return len(list(await session.scalars(select(Consumer))))


async def test_create_read_list_update_delete(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    created = await create(
        client,
        org,
        admin,
        username="mobile-app",
        description="the iOS app",
        plugins={"key-auth": {}, "limit-count": LIMIT},
    )
    assert created.status_code == 201, created.text
    consumer = created.json()
    key = consumer["generatedCredentials"]["key-auth"]["key"]
    assert len(key) == 43  # 32 random bytes, urlsafe base64
    assert consumer["plugins"] == {"key-auth": {"keyHint": key[:4]}, "limit-count": LIMIT}
    assert consumer["username"] == "mobile-app" and consumer["orgId"] == str(org.id)

    got = await client.get(url(org, f"/{consumer['id']}"), headers=admin.headers)
    assert got.status_code == 200
    assert "generatedCredentials" not in got.json() and key not in got.text
    assert {k: v for k, v in consumer.items() if k != "generatedCredentials"} == got.json()

    listed = (await client.get(url(org), headers=admin.headers)).json()
    assert listed["total"] == 1 and listed["items"][0] == got.json()
    assert key not in json.dumps(listed)

    patched = await patch(client, org, admin, consumer["id"], description="iOS", username="ios")
    assert patched.status_code == 200, patched.text
    assert patched.json()["description"] == "iOS" and patched.json()["username"] == "ios"
    assert patched.json()["generatedCredentials"] == {}
    assert patched.json()["plugins"] == consumer["plugins"]  # untouched: the key is kept

    deleted = await client.delete(url(org, f"/{consumer['id']}"), headers=admin.headers)
    assert deleted.status_code == 204
    missing = await client.get(url(org, f"/{consumer['id']}"), headers=admin.headers)
    assert missing.status_code == 404
    assert missing.json()["detail"] == "consumer not found"


async def test_a_generated_key_is_shown_once_and_replaced_only_when_asked(
    client: httpx.AsyncClient, org: Org, admin: Account, database: Database
) -> None:
    created = (await create(client, org, admin, username="c1", plugins={"key-auth": {}})).json()
    first = created["generatedCredentials"]["key-auth"]["key"]
    assert await stored(database, "c1") == {
        "key-auth": {"key_hash": hashlib.sha256(first.encode()).hexdigest(), "key_hint": first[:4]}
    }
    # the response's plugins sent back unchanged (here with a plugin added) keep the key
    kept = await patch(
        client,
        org,
        admin,
        created["id"],
        plugins={**created["plugins"], "limit-count": LIMIT},
    )
    assert kept.status_code == 200, kept.text
    assert kept.json()["generatedCredentials"] == {}
    assert kept.json()["plugins"]["key-auth"] == {"keyHint": first[:4]}
    assert (await stored(database, "c1"))["key-auth"]["key_hash"] == (
        hashlib.sha256(first.encode()).hexdigest()
    )
    # a stale hint is not a way to keep or set a key
    stale = await patch(
        client, org, admin, created["id"], plugins={"key-auth": {"keyHint": "zzzz"}}
    )
    assert stale.status_code == 400
    assert stale.json()["errors"][0]["pointer"] == "/plugins/key-auth/keyHint"
    # {} again: a new key, shown in this response only
    renewed = await patch(client, org, admin, created["id"], plugins={"key-auth": {}})
    second = renewed.json()["generatedCredentials"]["key-auth"]["key"]
    assert second != first
    assert (await stored(database, "c1"))["key-auth"]["key_hash"] == (
        hashlib.sha256(second.encode()).hexdigest()
    )
    got = await client.get(url(org, f"/{created['id']}"), headers=admin.headers)
    assert second not in got.text and first not in got.text
    # a key chosen by the client is accepted and never echoed
    chosen = await patch(client, org, admin, created["id"], plugins={"key-auth": {"key": "k" * 12}})
    assert chosen.json()["plugins"] == {"key-auth": {"keyHint": "kkkk"}}
    assert chosen.json()["generatedCredentials"] == {} and "k" * 12 not in chosen.text
    # plugins without key-auth: the credential is gone
    removed = await patch(client, org, admin, created["id"], plugins={"limit-count": LIMIT})
    assert removed.json()["plugins"] == {"limit-count": LIMIT}
    assert await stored(database, "c1") == {"limit-count": LIMIT}


async def test_no_secret_is_stored_in_clear_or_shown(
    client: httpx.AsyncClient, org: Org, admin: Account, database: Database
) -> None:
    redis_url = "redis://:redis-password@cache.internal:6379/0"
    plugins = {
        "key-auth": {"key": "client-chosen-key"},
        "basic-auth": {"username": "alice", "password": "alice-password"},
        "jwt-auth": {"key": "alice-jwt", "secret": JWT_SECRET},
        "limit-count": {**LIMIT, "policy": "redis", "redis_url": redis_url},
    }
    created = await create(client, org, admin, username="alice", plugins=plugins)
    assert created.status_code == 201, created.text
    shown = created.json()["plugins"]
    assert shown == {
        "key-auth": {"keyHint": "clie"},
        "basic-auth": {"username": "alice", "password": MASK},
        "jwt-auth": {
            "key": "alice-jwt",
            "secret": MASK,
            "algorithm": "HS256",
            "exp": 86400,
            "base64_secret": False,
        },
        "limit-count": {**LIMIT, "policy": "redis", "redis_url": MASK},
    }
    at_rest = await stored(database, "alice")
    text = json.dumps(at_rest)
    for secret in ("client-chosen-key", "alice-password", JWT_SECRET):
        assert secret not in text
    assert at_rest["key-auth"]["key_hash"] == hashlib.sha256(b"client-chosen-key").hexdigest()
    password_hash = at_rest["basic-auth"]["password_hash"]
    assert verify_password_hash(password_hash, "alice-password")
    box = SecretBox([TEST_SECRET])
    assert box.decrypt(at_rest["jwt-auth"]["secret_encrypted"]) == JWT_SECRET
    assert at_rest["limit-count"]["redis_url"] == redis_url  # the gateway connects with it

    # the masked response sent back keeps every secret (the JWT secret is re-encrypted)
    echoed = await patch(client, org, admin, created.json()["id"], plugins=shown)
    assert echoed.status_code == 200, echoed.text
    assert echoed.json()["plugins"] == shown
    after = await stored(database, "alice")
    assert after["key-auth"] == at_rest["key-auth"]
    assert after["basic-auth"]["password_hash"] == password_hash
    assert box.decrypt(after["jwt-auth"]["secret_encrypted"]) == JWT_SECRET
    assert after["limit-count"]["redis_url"] == redis_url
    # a masked field with nothing stored to keep is refused
    new = await create(
        client, org, admin, username="bob", plugins={"basic-auth": {**shown["basic-auth"]}}
    )
    assert new.status_code == 400
    assert new.json()["errors"] == [
        {
            "pointer": "/plugins/basic-auth/password",
            "detail": f'password is masked ("{MASK}") but no password is stored to keep; '
            "send the value",
        }
    ]


CREDENTIAL = "failed to check the configuration of plugin"


@pytest.mark.parametrize(
    ("body", "pointer", "detail"),
    [
        ({}, "/username", "required property 'username' not found"),
        ({"username": 5}, "/username", "$.username: string expected"),
        ({"username": ""}, "/username", "$.username: must be at least 1 characters long"),
        ({"username": "x" * 65}, "/username", "$.username: must be at most 64 characters long"),
        ({"username": "has space"}, "/username", None),
        ({"username": "a", "colour": "red"}, "/colour", "property 'colour' is not allowed"),
        ({"username": "a", "plugins": []}, "/plugins", "$.plugins: object expected"),
        ({"username": "a", "plugins": {"key-auth": "k"}}, "/plugins/key-auth", None),
        ({"username": "a", "description": "d" * 257}, "/description", None),
        (
            {"username": "a", "plugins": {"Key-Auth": {}}},
            "/plugins/Key-Auth",
            f"{CREDENTIAL} Key-Auth: unknown plugin 'Key-Auth' (plugin names are case-sensitive)",
        ),
        (
            {"username": "a", "plugins": {"key-auth": {"key": "short"}}},
            "/plugins/key-auth/key",
            f"{CREDENTIAL} key-auth: $.key: must be at least 8 characters long",
        ),
        (
            {"username": "a", "plugins": {"key-auth": {"key": "k" * 8, "header": "x-key"}}},
            "/plugins/key-auth/header",
            f'{CREDENTIAL} key-auth: property "header" is not allowed',
        ),
        (
            {"username": "a", "plugins": {"basic-auth": {"username": "u"}}},
            "/plugins/basic-auth/password",
            f'{CREDENTIAL} basic-auth: property "password" is required',
        ),
        (
            {"username": "a", "plugins": {"jwt-auth": {"key": "k", "secret": "short"}}},
            "/plugins/jwt-auth/secret",
            f"{CREDENTIAL} jwt-auth: secret must be at least 32 bytes for HS256 (RFC 7518 §3.2)",
        ),
        (
            {"username": "a", "plugins": {"ldap-auth": {"user_dn": "alice"}}},
            "/plugins/ldap-auth/user_dn",
            None,
        ),
        (
            {
                "username": "a",
                "plugins": {
                    "openid-connect": {
                        "client_id": "c",
                        "client_secret": "s",
                        "discovery": "https://idp.example.com/.well-known/openid-configuration",
                    }
                },
            },
            "/plugins/openid-connect",
            f"{CREDENTIAL} openid-connect: openid-connect keeps no credential on a consumer; "
            "attach it to a service or a route",
        ),
        (
            {"username": "a", "plugins": {"limit-count": {"count": 0, "time_window": 1}}},
            "/plugins/limit-count/count",
            f"{CREDENTIAL} limit-count: $.count: must be greater than 0",
        ),
        (
            {"username": "a", "plugins": {"key-auth": {"key": "bad\u0000key"}}},
            "/plugins/key-auth/key",
            None,
        ),
    ],
)
async def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    database: Database,
    body: dict[str, object],
    pointer: str,
    detail: str | None,
) -> None:
    response = await client.post(url(org), json=body, headers=admin.headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert pointer in [e["pointer"] for e in problem["errors"]]
    if detail is not None:
        assert problem["detail"] == detail
    assert await count(database) == 0


async def test_every_bad_plugin_is_reported(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    response = await create(
        client,
        org,
        admin,
        username="a",
        plugins={"key-auth": {"key": "short"}, "nope": {}, "limit-count": LIMIT},
    )
    assert response.status_code == 400
    assert [e["pointer"] for e in response.json()["errors"]] == [
        "/plugins/key-auth/key",
        "/plugins/nope",
    ]


async def test_usernames_and_credentials_are_unique_in_the_org(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account, database: Database
) -> None:
    first = await create(
        client,
        org,
        admin,
        username="one",
        plugins={
            "key-auth": {"key": "shared-key-1"},
            "basic-auth": {"username": "u", "password": "p"},
        },
    )
    assert first.status_code == 201
    again = await create(client, org, admin, username="one")
    assert again.status_code == 409
    assert again.json()["detail"] == "a consumer named 'one' already exists"
    duplicate_key = await create(
        client, org, admin, username="two", plugins={"key-auth": {"key": "shared-key-1"}}
    )
    assert duplicate_key.status_code == 409
    assert duplicate_key.json()["detail"] == "key already in use by another consumer"
    assert duplicate_key.json()["errors"][0]["pointer"] == "/plugins/key-auth/key"
    duplicate_user = await create(
        client,
        org,
        admin,
        username="two",
        plugins={"basic-auth": {"username": "u", "password": "x"}},
    )
    assert duplicate_user.status_code == 409
    assert duplicate_user.json()["detail"] == "username already in use by another consumer"
    assert await count(database) == 1

    two = (await create(client, org, admin, username="two")).json()
    assert (await patch(client, org, admin, two["id"], username="one")).status_code == 409
    taken = await patch(
        client, org, admin, two["id"], plugins={"key-auth": {"key": "shared-key-1"}}
    )
    assert taken.status_code == 409
    assert taken.json()["detail"] == "key already in use by another consumer"
    assert await stored(database, "two") == {}
    # the consumer's own credential is not a conflict with itself
    own = await patch(
        client, org, admin, first.json()["id"], plugins={"key-auth": {"key": "shared-key-1"}}
    )
    assert own.status_code == 200, own.text

    # another organisation has consumers of its own
    other = await factory.org()
    other_admin = await factory.user(other, roles=("Administrator",))
    elsewhere = await create(
        client, other, other_admin, username="one", plugins={"key-auth": {"key": "shared-key-1"}}
    )
    assert elsewhere.status_code == 201


async def test_listing_sorts_filters_and_rejects_unknown_parameters(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    for name in ("b", "c", "a"):
        assert (await create(client, org, admin, username=name)).status_code == 201
    names = lambda r: [e["username"] for e in r.json()["items"]]  # noqa: E731
    assert names(await client.get(url(org), headers=admin.headers)) == ["a", "b", "c"]
    assert names(await client.get(url(org, "?sort=-username"), headers=admin.headers)) == [
        "c",
        "b",
        "a",
    ]
    assert names(await client.get(url(org, "?username=b"), headers=admin.headers)) == ["b"]
    paged = (await client.get(url(org, "?size=2&page=2"), headers=admin.headers)).json()
    assert names_of(paged) == ["c"] and paged["total"] == 3
    for bad in ("?colour=red", "?sort=key", "?size=0", "?username=%00"):
        response = await client.get(url(org, bad), headers=admin.headers)
        assert response.status_code == 400, bad


def names_of(page: dict[str, Any]) -> list[str]:
    return [e["username"] for e in page["items"]]


async def test_permissions_and_tenancy(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account, viewer: Account
) -> None:
    consumer = (await create(client, org, admin, username="c")).json()
    path = url(org, f"/{consumer['id']}")
    assert (await client.get(url(org), headers=viewer.headers)).status_code == 200
    assert (await client.get(path, headers=viewer.headers)).status_code == 200
    for method, target, body in (
        ("POST", url(org), {"username": "nope"}),
        ("PATCH", path, {"description": "nope"}),
        ("DELETE", path, None),
    ):
        denied = await client.request(method, target, json=body, headers=viewer.headers)
        assert denied.status_code == 403, method
        assert denied.json()["detail"] == "missing permission 'consumer.manage'"
    member = await factory.user(org)  # no role at all
    unread = await client.get(url(org), headers=member.headers)
    assert unread.status_code == 403
    assert unread.json()["detail"] == "missing permission 'consumer.read'"

    other = await factory.org()
    outsider = await factory.user(other, roles=("Administrator",))
    for method in ("GET", "PATCH", "DELETE"):
        # another org's consumer, through the outsider's own org: not found
        swapped = await client.request(
            method,
            f"/api/orgs/{other.id}/consumers/{consumer['id']}",
            json={} if method == "PATCH" else None,
            headers=outsider.headers,
        )
        assert swapped.status_code == 404, method
        for suffix in (f"/{uuid.uuid4()}", "/not-a-uuid"):
            response = await client.request(
                method,
                url(org, suffix),
                json={} if method == "PATCH" else None,
                headers=admin.headers,
            )
            assert response.status_code == 404, (method, suffix)
    assert (await client.get(url(org), headers=outsider.headers)).status_code == 404
    assert (await client.get(url(org))).status_code == 401
    assert (await client.post(url(org), json={"username": "x"})).status_code == 401
    assert (await client.get(path, headers=admin.headers)).json()["description"] == ""


async def test_every_change_is_audited_without_secrets(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    created = await create(
        client,
        org,
        admin,
        username="audited",
        plugins={"key-auth": {}, "basic-auth": {"username": "au", "password": "audit-pass"}},
    )
    consumer = created.json()
    key = consumer["generatedCredentials"]["key-auth"]["key"]
    renewed = await patch(
        client,
        org,
        admin,
        consumer["id"],
        plugins={"key-auth": {}, "jwt-auth": {"key": "jk", "secret": JWT_SECRET}},
    )
    new_key = renewed.json()["generatedCredentials"]["key-auth"]["key"]
    await client.delete(url(org, f"/{consumer['id']}"), headers=admin.headers)

    log = (await client.get(f"/api/orgs/{org.id}/audit-log", headers=admin.headers)).json()
    entries = [e for e in log["items"] if e["entityId"] == consumer["id"]]
    assert [e["action"] for e in entries] == [
        "consumer.delete",
        "consumer.update",
        "consumer.create",
    ]
    delete, update, create_ = entries
    assert create_["after"]["plugins"] == {
        "key-auth": {"keyHint": key[:4]},
        "basic-auth": {"username": "au", "password": REDACTED},  # masked, then redacted by key
    }
    assert update["before"]["plugins"] == create_["after"]["plugins"]
    assert update["after"]["plugins"]["key-auth"] == {"keyHint": new_key[:4]}
    assert update["after"]["plugins"]["jwt-auth"]["secret"] == REDACTED
    assert delete["before"]["username"] == "audited" and delete["after"] is None
    assert create_["actor"]["email"] == admin.email
    text = json.dumps(entries)
    for secret in (
        key,
        new_key,
        "audit-pass",
        JWT_SECRET,
        hashlib.sha256(key.encode()).hexdigest(),
    ):
        assert secret not in text


async def env_versions(client: httpx.AsyncClient, org: Org, admin: Account) -> dict[str, int]:
    envs = (await client.get(f"/api/orgs/{org.id}/envs", headers=admin.headers)).json()["items"]
    out = {}
    for env in envs:
        detail = await client.get(f"/api/orgs/{org.id}/envs/{env['id']}", headers=admin.headers)
        out[env["name"]] = detail.json()["configVersion"]
    return out


async def test_every_change_publishes_a_config_to_each_environment_of_the_org(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    for name in ("prod", "test"):
        env = await client.post(
            f"/api/orgs/{org.id}/envs", json={"name": name}, headers=admin.headers
        )
        assert env.status_code == 201
    other = await factory.org()
    other_admin = await factory.user(other, roles=("Administrator",))
    await client.post(f"/api/orgs/{other.id}/envs", json={"name": "x"}, headers=other_admin.headers)

    assert await env_versions(client, org, admin) == {"prod": 1, "test": 1}
    consumer = (await create(client, org, admin, username="c", plugins={"key-auth": {}})).json()
    assert await env_versions(client, org, admin) == {"prod": 2, "test": 2}
    await patch(client, org, admin, consumer["id"], plugins={"limit-count": LIMIT})
    assert await env_versions(client, org, admin) == {"prod": 3, "test": 3}
    await patch(client, org, admin, consumer["id"], username="renamed")
    assert await env_versions(client, org, admin) == {"prod": 4, "test": 4}
    # gateways hold nothing of a description: no new version for it
    await patch(client, org, admin, consumer["id"], description="notes")
    assert await env_versions(client, org, admin) == {"prod": 4, "test": 4}
    # a refused change publishes nothing
    assert (await create(client, org, admin, username="renamed")).status_code == 409
    bad = await patch(client, org, admin, consumer["id"], plugins={"nope": {}})
    assert bad.status_code == 400
    assert await env_versions(client, org, admin) == {"prod": 4, "test": 4}
    await client.delete(url(org, f"/{consumer['id']}"), headers=admin.headers)
    assert await env_versions(client, org, admin) == {"prod": 5, "test": 5}
    assert await env_versions(client, other, other_admin) == {"x": 1}


async def test_snapshot_consumers_give_gateways_what_they_check(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account, database: Database
) -> None:
    plugins = {
        "key-auth": {"key": "alice-key-123"},
        "basic-auth": {"username": "alice", "password": "alice-password"},
        "jwt-auth": {"key": "alice-jwt", "secret": JWT_SECRET},
        "limit-count": LIMIT,
        "proxy-rewrite": {"uri": "/alice"},
    }
    assert (await create(client, org, admin, username="zed")).status_code == 201
    alice = await create(client, org, admin, username="alice", plugins=plugins)
    other = await factory.org()
    other_admin = await factory.user(other, roles=("Administrator",))
    await create(client, other, other_admin, username="elsewhere")

    async with database.session() as session:
        consumers = await snapshot_consumers(session, org.id, uuid.uuid4())
    assert [c.username for c in consumers] == ["alice", "zed"]
    first = consumers[0]
    assert first.id == alice.json()["id"]
    assert first.credentials["key-auth"] == {
        "key_hash": hashlib.sha256(b"alice-key-123").hexdigest()
    }
    assert first.credentials["basic-auth"]["username"] == "alice"
    assert verify_password_hash(first.credentials["basic-auth"]["password_hash"], "alice-password")
    jwt = first.credentials["jwt-auth"]
    assert SecretBox([TEST_SECRET]).decrypt(jwt["secret_encrypted"]) == JWT_SECRET
    assert (jwt["key"], jwt["algorithm"]) == ("alice-jwt", "HS256")
    assert [(p.name, p.scope) for p in first.plugins] == [
        ("limit-count", "consumer"),
        ("proxy-rewrite", "consumer"),
    ]
    assert first.plugins[0].order < first.plugins[1].order
    assert first.plugins[0].config["count"] == 10  # validated, defaults filled in
    assert first.plugins[0].config["rejected_code"] == 503
    assert consumers[1].credentials == {} and consumers[1].plugins == []


async def test_every_environment_snapshot_carries_the_orgs_consumers(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    envs = []
    for name in ("prod", "test"):
        env = await client.post(
            f"/api/orgs/{org.id}/envs", json={"name": name}, headers=admin.headers
        )
        envs.append(env.json()["id"])
    consumer = await create(
        client, org, admin, username="app", plugins={"key-auth": {}, "limit-count": LIMIT}
    )
    key = consumer.json()["generatedCredentials"]["key-auth"]["key"]
    # an environment created later carries the org's consumers from its first version
    late = await client.post(f"/api/orgs/{org.id}/envs", json={"name": "qa"}, headers=admin.headers)
    envs.append(late.json()["id"])
    for env_id in envs:
        config = await client.get(f"/api/dataplane/v1/envs/{env_id}/config", headers=admin.headers)
        assert config.status_code == 200
        [carried] = config.json()["consumers"]
        assert carried["id"] == consumer.json()["id"] and carried["username"] == "app"
        assert carried["credentials"] == {
            "key-auth": {"key_hash": hashlib.sha256(key.encode()).hexdigest()}
        }
        assert [(p["name"], p["scope"]) for p in carried["plugins"]] == [
            ("limit-count", "consumer")
        ]
        assert key not in config.text
    await client.delete(url(org, f"/{consumer.json()['id']}"), headers=admin.headers)
    config = await client.get(f"/api/dataplane/v1/envs/{envs[0]}/config", headers=admin.headers)
    assert config.json()["consumers"] == []
