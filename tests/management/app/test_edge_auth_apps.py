"""An app's edge-auth credential (an OAuth 2.0 client id and secret): generated with
``plugins: {"edge-auth": {}}``, the secret shown once in the 201 and stored hashed, kept when
the answer's masked form is sent back, unique in the organisation, rotated with a grace
period like the app's other credentials; tried on real traffic through a gateway fed the
snapshot the control plane published (a token endpoint and a validated route)."""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from typing import Any

import httpx
from sqlalchemy import select

from portico.core.db.engine import Database
from portico.gateway.gateway import Gateway
from portico.gateway.node_options import GatewayOptions
from portico.management.consumer.models import Consumer
from tests.conftest import TEST_SECRET
from tests.gateway.test_pipeline import running
from tests.management.app.test_apps import config, create_app, developer
from tests.management.conftest import World, route

SECRET = "edge-signing-secret-" + "x" * 24


async def deploy_token_api(world: World, backend: int) -> None:
    """``POST /oauth/token`` (generate) and ``GET /orders`` (validate, jwt-auth)."""
    up = await world.call(
        "POST",
        f"/envs/{world.env_id}/upstreams",
        {"name": "echo", "specification": {"nodes": [{"host": "127.0.0.1", "port": backend}]}},
    )
    api = await world.call("POST", "/apis", {"name": "edge"})
    revision = await world.call(
        "POST",
        f"/apis/{api.json()['id']}/revisions",
        {
            "serviceSpec": {
                "name": "edge",
                "plugins": {"helix-auth": {"mode": "validate", "signing_secret": SECRET}},
            },
            "routeSpec": [
                route(
                    "/oauth/token",
                    ["POST"],
                    plugins={"helix-auth": {"mode": "generate", "signing_secret": SECRET}},
                ),
                route("/orders"),
            ],
            "environmentUpstreams": [
                {"environmentId": world.env_id, "upstreamId": up.json()["id"]}
            ],
        },
    )
    assert revision.status_code == 201, revision.text
    deployed = await world.deploy({"api": api.json()["id"], "revision": revision.json()["id"]})
    assert deployed.status_code == 200, deployed.text


def basic(credential: dict[str, str]) -> dict[str, str]:
    pair = f"{credential['client_id']}:{credential['client_secret']}".encode()
    return {"Authorization": "Basic " + base64.b64encode(pair).decode()}


async def opens(client: httpx.AsyncClient, credential: dict[str, str]) -> list[int]:
    """The token endpoint's status, then the validated route's with the token got."""
    issued = await client.post("/oauth/token", headers=basic(credential))
    if issued.status_code != 200:
        return [issued.status_code]
    access = issued.json()["access_token"]
    answer = await client.get("/orders", headers={"Authorization": f"Bearer {access}"})
    return [200, answer.status_code]


async def test_generated_once_stored_hashed_kept_when_sent_back(
    world: World, database: Database
) -> None:
    dev = await developer(world, "ada@example.com")
    created = await create_app(world, dev, name="mobile", plugins={"edge-auth": {}})
    assert created.status_code == 201, created.text
    body = created.json()
    generated = body["generatedCredentials"]["edge-auth"]
    assert set(generated) == {"client_id", "client_secret"}
    assert len(generated["client_secret"]) >= 40
    shown = {"client_id": generated["client_id"], "client_secret": "********"}
    assert body["credentials"] == {"edge-auth": shown}
    consumer_id = uuid.UUID(body["consumerId"])
    again = await world.call("GET", f"/apps/{body['id']}")
    assert generated["client_secret"] not in again.text
    async with database.session() as session:
        consumer = await session.scalar(select(Consumer).where(Consumer.id == consumer_id))
        assert consumer is not None
        stored = consumer.plugins["edge-auth"]
    assert stored == {
        "client_id": generated["client_id"],
        "client_secret_hash": hashlib.sha256(generated["client_secret"].encode()).hexdigest(),
    }
    # the snapshot carries the hash, never the secret
    document = await config(world)
    [entry] = [c for c in document["consumers"] if c["app"]]
    assert entry["credentials"] == {"edge-auth": stored}

    kept = await world.call("PATCH", f"/apps/{body['id']}", {"plugins": {"edge-auth": shown}})
    assert kept.status_code == 200, kept.text
    assert kept.json()["generatedCredentials"] == {}
    async with database.session() as session:
        consumer = await session.scalar(select(Consumer).where(Consumer.id == consumer_id))
        assert consumer is not None and consumer.plugins["edge-auth"] == stored


async def test_a_chosen_client_id_unique_in_the_org_and_a_long_enough_secret(
    world: World, database: Database
) -> None:
    dev = await developer(world, "bob@example.com")
    chosen = await create_app(
        world, dev, name="first", plugins={"edge-auth": {"client_id": "partner-42-client"}}
    )
    assert chosen.status_code == 201, chosen.text
    assert chosen.json()["generatedCredentials"]["edge-auth"]["client_id"] == "partner-42-client"
    taken = await create_app(
        world, dev, name="second", plugins={"edge-auth": {"client_id": "partner-42-client"}}
    )
    assert taken.status_code == 409, taken.text
    assert taken.json()["errors"] == [
        {
            "pointer": "/plugins/edge-auth/client_id",
            "detail": "client_id already in use by another consumer",
        }
    ]
    for sent, pointer in (
        ({"client_id": "p-1", "client_secret": "s" * 40}, "/plugins/edge-auth/client_id"),
        ({"client_secret": "too-short"}, "/plugins/edge-auth/client_secret"),
        ({"client_id": "has:colon-x"}, "/plugins/edge-auth/client_id"),
        ({"client_id": "abcdefgh", "extra": 1}, "/plugins/edge-auth/extra"),
    ):
        refused = await create_app(world, dev, name="third", plugins={"edge-auth": sent})
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"][0]["pointer"] == pointer
    consumer = await world.call(
        "POST", "/consumers", {"username": "svc", "plugins": {"edge-auth": {}}}
    )
    assert consumer.status_code == 201, consumer.text
    assert set(consumer.json()["generatedCredentials"]["edge-auth"]) == {
        "client_id",
        "client_secret",
    }


async def test_rotation_keeps_the_old_client_working_through_the_grace_only(
    world: World, database: Database, backend: int
) -> None:
    await deploy_token_api(world, backend)
    dev = await developer(world, "cy@example.com")
    created = await create_app(world, dev, name="mobile", plugins={"edge-auth": {}})
    first = created.json()["generatedCredentials"]["edge-auth"]
    rotation = await world.call(
        "POST", f"/apps/{created.json()['id']}/credentials/rotate", {"graceSeconds": 300}
    )
    assert rotation.status_code == 200, rotation.text
    second = rotation.json()["generatedCredentials"]["edge-auth"]
    assert second["client_id"] != first["client_id"]
    assert second["client_secret"] != first["client_secret"]

    clock: dict[str, Any] = {"now": time.time()}
    # a node given the server secret: deploy sealed the signing secret with it
    gw = Gateway(now=lambda: clock["now"], options=GatewayOptions(secret_keys=(TEST_SECRET,)))
    await gw.apply(await config(world))
    async with running(gw) as client:
        assert await opens(client, first) == [200, 200]
        assert await opens(client, second) == [200, 200]
        stale = await client.post("/oauth/token", headers=basic(first))
        clock["now"] += 301
        assert await opens(client, first) == [401]
        assert await opens(client, second) == [200, 200]
        token = stale.json()["access_token"]  # issued to the old client id: retired with it
        answer = await client.get("/orders", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 401
