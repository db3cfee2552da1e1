"""Rotating an app's credentials, tried on real traffic: every credential the app has is
replaced (key-auth key, basic-auth password, jwt-auth key id and secret); with a grace period
the replaced ones keep working until it ends, without one they stop at once."""

from __future__ import annotations

import base64
import time
from typing import Any

import httpx
import jwt

from portico.core.db.engine import Database
from portico.gateway.gateway import Gateway
from portico.gateway.node_options import GatewayOptions
from tests.conftest import TEST_SECRET
from tests.gateway.test_pipeline import running
from tests.management.app.test_apps import config, create_app, developer
from tests.management.conftest import World, route

AUTH = ("key-auth", "basic-auth", "jwt-auth")
#: a node given the server's secret, so that it can decrypt jwt-auth secrets
NODE = GatewayOptions(secret_keys=(TEST_SECRET,))


async def deploy_one_api_per_credential(world: World, backend: int) -> None:
    """``/key``, ``/basic`` and ``/jwt``, each behind its authentication plugin."""
    up = await world.call(
        "POST",
        f"/envs/{world.env_id}/upstreams",
        {"name": "echo", "specification": {"nodes": [{"host": "127.0.0.1", "port": backend}]}},
    )
    for plugin, path in zip(AUTH, ("/key", "/basic", "/jwt"), strict=True):
        api = await world.call("POST", "/apis", {"name": path.strip("/")})
        revision = await world.call(
            "POST",
            f"/apis/{api.json()['id']}/revisions",
            {
                "serviceSpec": {"name": path.strip("/"), "plugins": {plugin: {}}},
                "routeSpec": [route(path)],
                "environmentUpstreams": [
                    {"environmentId": world.env_id, "upstreamId": up.json()["id"]}
                ],
            },
        )
        deployed = await world.deploy({"api": api.json()["id"], "revision": revision.json()["id"]})
        assert deployed.status_code == 200, deployed.text


class Credentials:
    """One generation of an app's credentials, as the API showed them once."""

    def __init__(self, generated: dict[str, Any], username: str = "") -> None:
        self.key = generated["key-auth"]["key"]
        basic = generated["basic-auth"]
        self.username = basic.get("username", username)  # a rotation keeps the username
        self.basic = base64.b64encode(f"{self.username}:{basic['password']}".encode())
        self.jwt_key = generated["jwt-auth"]["key"]
        self.jwt_secret = generated["jwt-auth"]["secret"]

    async def statuses(self, client: httpx.AsyncClient, now: float) -> list[int]:
        token = jwt.encode({"key": self.jwt_key, "exp": int(now) + 600}, self.jwt_secret)
        answers = [
            await client.get("/key", headers={"apikey": self.key}),
            await client.get("/basic", headers={"Authorization": b"Basic " + self.basic}),
            await client.get("/jwt", headers={"Authorization": f"Bearer {token}"}),
        ]
        return [answer.status_code for answer in answers]


async def rotated(world: World, app_id: str, grace: int, before: Credentials) -> Credentials:
    answer = await world.call("POST", f"/apps/{app_id}/credentials/rotate", {"graceSeconds": grace})
    assert answer.status_code == 200, answer.text
    generated = answer.json()["generatedCredentials"]
    assert set(generated) == set(AUTH)
    assert set(generated["basic-auth"]) == {"password"}  # the username stays
    return Credentials(generated, before.username)


async def test_replaced_credentials_work_through_the_grace_period_only(
    world: World, database: Database, backend: int
) -> None:
    await deploy_one_api_per_credential(world, backend)
    dev = await developer(world, "ada@example.com")
    created = await create_app(world, dev, name="mobile", plugins={name: {} for name in AUTH})
    assert created.status_code == 201, created.text
    app_id = created.json()["id"]
    first = Credentials(created.json()["generatedCredentials"])
    second = await rotated(world, app_id, grace=300, before=first)
    assert second.key != first.key and second.jwt_key != first.jwt_key

    clock = {"now": time.time()}  # the grace period is counted from the rotation
    gw = Gateway(now=lambda: clock["now"], options=NODE)
    await gw.apply(await config(world))
    async with running(gw) as client:
        assert await first.statuses(client, clock["now"]) == [200, 200, 200]
        assert await second.statuses(client, clock["now"]) == [200, 200, 200]
        clock["now"] += 301
        assert await first.statuses(client, clock["now"]) == [401, 401, 401]
        assert await second.statuses(client, clock["now"]) == [200, 200, 200]

        # without a grace period the replaced credentials stop at once
        third = await rotated(world, app_id, grace=0, before=second)
        clock["now"] = time.time()
        await gw.apply(await config(world))
        assert await second.statuses(client, clock["now"]) == [401, 401, 401]
        assert await third.statuses(client, clock["now"]) == [200, 200, 200]


async def test_a_grace_period_outlasts_a_later_rotation(
    world: World, database: Database, backend: int
) -> None:
    """Rotating twice in a row: the first key's grace period is kept, not cut short."""
    await deploy_one_api_per_credential(world, backend)
    dev = await developer(world, "bob@example.com")
    created = await create_app(world, dev, name="server", plugins={name: {} for name in AUTH})
    first = Credentials(created.json()["generatedCredentials"])
    second = await rotated(world, created.json()["id"], grace=600, before=first)
    third = await rotated(world, created.json()["id"], grace=0, before=second)
    now = time.time()
    gw = Gateway(now=lambda: now, options=NODE)
    await gw.apply(await config(world))
    async with running(gw) as client:
        assert await first.statuses(client, now) == [200, 200, 200]
        assert await third.statuses(client, now) == [200, 200, 200]
