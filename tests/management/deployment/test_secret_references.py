"""Secrets a revision's plugins name by reference, resolved at deploy: ``$secret://NAME`` from
the organisation's store, ``$env://NAME`` from the control plane's environment, literals as
they are; sealed in the snapshot (never in clear) and the same in every snapshot the
deployment is published in; a reference that resolves to nothing, or to a value the plugin
refuses, is a 400 naming it; a gateway given the server secret signs with the resolved
value."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import jwt
import pytest

from portico.gateway.gateway import Gateway
from portico.gateway.node_options import GatewayOptions
from tests.conftest import TEST_SECRET
from tests.e2e.test_gateway import Echo
from tests.gateway.test_pipeline import running
from tests.management.conftest import World, route

VALUE = "stored-signing-secret-" + "s" * 30
ENV_VALUE = "environment-signing-secret-" + "e" * 30


@pytest.fixture
def backend() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def edge_api(signing_secret: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Routes and service plugins of an API whose token endpoint signs with the secret."""
    routes = [
        route(
            "/oauth/token",
            ["POST"],
            plugins={"edge-auth": {"mode": "generate", "signing_secret": signing_secret}},
        ),
        route("/orders"),
    ]
    service = {"edge-auth": {"mode": "validate", "signing_secret": signing_secret}}
    return routes, service


async def deployed_config(world: World, signing_secret: str) -> tuple[dict[str, str], Any]:
    routes, service = edge_api(signing_secret)
    ids = await world.api("edge", routes, plugins=service)
    answer = await world.deploy(ids)
    return ids, answer


async def test_a_stored_secret_is_sealed_into_the_snapshot_and_signs_tokens(
    world: World, backend: int
) -> None:
    stored = await world.call("POST", "/secrets", {"name": "edge-key", "value": VALUE})
    assert stored.status_code == 201, stored.text
    up = await world.call(
        "PUT",
        f"/envs/{world.env_id}/upstreams/{world.upstream_id}",
        {
            "name": "backend",
            "description": "",
            "specification": {"nodes": [{"host": "127.0.0.1", "port": backend, "weight": 1}]},
        },
    )
    assert up.status_code == 200, up.text
    dry = await world.dry_run(await world.api("dry", edge_api("$secret://edge-key")[0]))
    assert dry.status_code == 200, dry.text
    _, deployed = await deployed_config(world, "$secret://edge-key")
    assert deployed.status_code == 200, deployed.text
    first = (await world.config()).json()
    assert VALUE not in str(first)
    configs = [
        p["config"] for r in first["routes"] for p in r["plugins"] if p["name"] == "edge-auth"
    ]
    assert len(configs) == 2 and all(c["signing_secret"].startswith("$sealed:") for c in configs)
    # another change of the environment publishes the same sealed value
    consumer = await world.call(
        "POST", "/consumers", {"username": "partner", "plugins": {"edge-auth": {}}}
    )
    generated = consumer.json()["generatedCredentials"]["edge-auth"]
    second = (await world.config()).json()
    assert second["version"] > first["version"]
    assert [r["plugins"] for r in second["routes"]] == [r["plugins"] for r in first["routes"]]

    gw = Gateway(options=GatewayOptions(secret_keys=(TEST_SECRET,)))
    await gw.apply(second)
    async with running(gw) as client:
        pair = f"{generated['client_id']}:{generated['client_secret']}".encode()
        issued = await client.post(
            "/oauth/token", headers={"Authorization": "Basic " + base64.b64encode(pair).decode()}
        )
        assert issued.status_code == 200, issued.text
        token = issued.json()["access_token"]
        claims = jwt.decode(token, VALUE, algorithms=["HS256"])
        assert claims["sub"] == generated["client_id"]
        opened = await client.get("/orders", headers={"Authorization": f"Bearer {token}"})
        assert opened.status_code == 200
    await gw.close()

    # deleting the secret leaves the deployment with what it resolved
    assert (await world.call("DELETE", f"/secrets/{stored.json()['id']}")).status_code == 204
    assert (await world.config()).json()["routes"] == second["routes"]


async def test_an_environment_variable_is_resolved_and_checked(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PORTICO_TEST_EDGE_SECRET", ENV_VALUE)
    monkeypatch.setenv("PORTICO_TEST_SHORT_SECRET", "too-short")
    _, deployed = await deployed_config(world, "$env://PORTICO_TEST_EDGE_SECRET")
    assert deployed.status_code == 200, deployed.text
    assert ENV_VALUE not in str((await world.config()).json())
    short = edge_api("$env://PORTICO_TEST_SHORT_SECRET")[0][0]
    ids = await world.api("short", [{**short, "uri": "/short/token"}])
    refused = await world.deploy(ids)
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"] == [
        {
            "pointer": "/routeSpec/0/plugins/edge-auth/signing_secret",
            "detail": "$env://PORTICO_TEST_SHORT_SECRET gives a value the plugin refuses: "
            "signing_secret must be at least 32 bytes for HS256 once resolved (it is 9): a "
            "shorter HMAC key is a guessable key",
        }
    ]


@pytest.mark.parametrize(
    ("secret", "detail"),
    [
        (
            "$secret://missing",
            "signing_secret: $secret://missing resolves to nothing: this organisation stores "
            "no secret named 'missing'",
        ),
        (
            "$env://PORTICO_TEST_NOT_SET_ANYWHERE",
            "signing_secret: $env://PORTICO_TEST_NOT_SET_ANYWHERE resolves to nothing: the "
            "control plane has no environment variable PORTICO_TEST_NOT_SET_ANYWHERE",
        ),
        (
            "$sealed:gAAAAforged",
            "signing_secret: $sealed: values are written by deploy; give the secret, "
            "$env://NAME or $secret://NAME",
        ),
    ],
)
async def test_a_reference_that_resolves_to_nothing_is_a_400_naming_it(
    world: World, secret: str, detail: str
) -> None:
    routes, service = edge_api(secret)
    ids = await world.api("edge", routes, plugins=service)
    for answer in (await world.dry_run(ids), await world.deploy(ids)):
        assert answer.status_code == 400, answer.text
        assert answer.json()["detail"] == (
            f"failed to check the configuration of plugin edge-auth: {detail}"
        )
        assert answer.json()["errors"] == [
            {"pointer": "/serviceSpec/plugins/edge-auth/signing_secret", "detail": detail}
        ]
    assert (await world.config()).json()["routes"] == []


async def test_a_global_plugin_takes_the_secret_itself(world: World) -> None:
    url = f"/envs/{world.env_id}/global-plugins/edge-auth"
    refused = await world.call(
        "PUT", url, {"mode": "validate", "signing_secret": "$secret://edge-key"}
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"] == [
        {
            "pointer": "/signing_secret",
            "detail": "signing_secret: references are resolved when a revision is deployed; a "
            "global plugin takes the secret itself",
        }
    ]
    taken = await world.call("PUT", url, {"mode": "validate", "signing_secret": VALUE})
    assert taken.status_code == 200, taken.text
