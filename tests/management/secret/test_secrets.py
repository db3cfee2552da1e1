"""The secret store over HTTP: values stored encrypted and never returned, names listed,
unique per organisation, deleted; every change audited without the value; tenancy."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from portico.core.db.engine import Database
from portico.management.secret.models import StoredSecret
from tests.conftest import Factory
from tests.management.conftest import World

VALUE = "the-signing-secret-" + "v" * 30


async def test_stored_encrypted_listed_by_name_never_returned(
    world: World, database: Database
) -> None:
    created = await world.call("POST", "/secrets", {"name": "edge.signing-key", "value": VALUE})
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == {"id", "orgId", "name", "createdAt", "updatedAt"}
    assert VALUE not in created.text
    listed = await world.call("GET", "/secrets")
    assert [s["name"] for s in listed.json()["items"]] == ["edge.signing-key"]
    assert VALUE not in listed.text
    async with database.session() as session:
        row = await session.scalar(select(StoredSecret))
        assert row is not None
        assert VALUE not in row.value_encrypted and row.value_encrypted.startswith("gAAAA")

    again = await world.call("POST", "/secrets", {"name": "edge.signing-key", "value": "x"})
    assert again.status_code == 409, again.text
    assert again.json()["errors"] == [{"pointer": "/name", "detail": "already in use"}]
    for bad, pointer in (
        ({"name": "-dash-first", "value": "x"}, "/name"),
        ({"name": "ok", "value": ""}, "/value"),
        ({"name": "ok"}, "/value"),
        ({"name": "ok", "value": "x", "extra": 1}, "/extra"),
    ):
        refused = await world.call("POST", "/secrets", bad)
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"][0]["pointer"] == pointer

    assert (await world.call("DELETE", f"/secrets/{body['id']}")).status_code == 204
    assert (await world.call("DELETE", f"/secrets/{body['id']}")).status_code == 404
    assert (await world.call("DELETE", "/secrets/not-a-uuid")).status_code == 404
    assert (await world.call("GET", "/secrets")).json()["total"] == 0

    log = (await world.call("GET", "/audit-log?entityType=secret")).json()
    actions = [(e["action"], e["entityId"]) for e in log["items"]]
    assert actions == [("secret.delete", body["id"]), ("secret.create", body["id"])]
    assert VALUE not in str(log)


async def test_another_organisation_sees_and_deletes_nothing(
    world: World, factory: Factory
) -> None:
    created = await world.call("POST", "/secrets", {"name": "mine", "value": VALUE})
    other_org = await factory.org("other")
    other = await factory.user(other_org, roles=("Administrator",))
    base = f"/api/orgs/{other_org.id}/secrets"
    listed = await world.client.get(base, headers=other.headers)
    assert listed.json()["total"] == 0
    gone = await world.client.delete(f"{base}/{created.json()['id']}", headers=other.headers)
    assert gone.status_code == 404
    same_name = await world.client.post(
        base, json={"name": "mine", "value": "theirs"}, headers=other.headers
    )
    assert same_name.status_code == 201
    assert uuid.UUID(same_name.json()["id"]) != uuid.UUID(created.json()["id"])
