"""Importing an OpenAPI document over HTTP, then deploying what it made."""

from __future__ import annotations

import json

import yaml

from tests.management.conftest import World

PETSTORE = """
openapi: 3.0.3
info:
  title: Petstore
  description: Pets, for sale.
  version: 1.0.0
x-portico:
  plugins:
    key-auth: {}
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      x-portico:
        plugins:
          limit-count: {count: 100, time_window: 60}
    post:
      operationId: createPet
      summary: Create a pet
  /pets/{petId}:
    get:
      operationId: showPetById
      summary: Info for a specific pet
"""


async def test_import_yaml_by_multipart_then_deploy(world: World) -> None:
    response = await world.client.post(
        f"{world.base}/apis/from-spec",
        files={"file": ("petstore.yaml", PETSTORE.encode(), "application/yaml")},
        headers=world.admin.headers,
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["api"]["name"] == "Petstore"
    assert body["api"]["desc"] == "Pets, for sale."
    revision = body["revision"]
    assert revision["number"] == 1
    assert revision["serviceSpec"]["plugins"] == {"key-auth": {}}
    routes = {(r["methods"][0], r["uri"]): r for r in revision["routeSpec"]}
    assert set(routes) == {("GET", "/pets"), ("POST", "/pets"), ("GET", "/pets/:petId")}
    assert routes[("GET", "/pets")]["plugins"] == {"limit-count": {"count": 100, "time_window": 60}}
    assert all("plugins" in r for r in revision["routeSpec"])
    spec = await world.call("GET", f"/apis/{body['api']['id']}/spec")
    assert spec.json()["info"]["title"] == "Petstore"

    # bind with /add, dry-run, deploy: the routes reach the environment's snapshot
    path = f"/apis/{body['api']['id']}/revisions/{revision['id']}"
    bound = await world.call(
        "PATCH",
        path + "/upstream-bindings/add",
        {
            "environmentUpstreams": [
                {"environmentId": world.env_id, "upstreamId": world.upstream_id}
            ]
        },
    )
    assert bound.status_code == 200, bound.text
    assert bound.json()["upstreamBindings"] == [
        {"environmentId": world.env_id, "upstreamId": world.upstream_id}
    ]
    before = (await world.config()).json()["version"]
    assert (
        await world.call("POST", path + "/deploy/dry-run", {"environmentId": world.env_id})
    ).status_code == 200
    deployed = await world.call("POST", path + "/deploy", {"environmentId": world.env_id})
    assert deployed.status_code == 200, deployed.text
    snapshot = (await world.config()).json()
    assert snapshot["version"] == before + 1
    assert {r["uri"] for r in snapshot["routes"]} == {"/pets", "/pets/:petId"}


async def test_import_json_body_and_the_alias(world: World) -> None:
    document = yaml.safe_load(PETSTORE)
    as_object = await world.call("POST", "/apis/import-openapi", {"spec": document})
    assert as_object.status_code == 201, as_object.text
    document["info"]["title"] = "Petstore 2"
    as_text = await world.call("POST", "/apis/from-spec", {"spec": json.dumps(document)})
    assert as_text.status_code == 201, as_text.text
    duplicate = await world.call("POST", "/apis/from-spec", {"spec": document})
    assert duplicate.status_code == 409


async def test_import_refusals(world: World) -> None:
    raw_yaml = await world.client.post(
        f"{world.base}/apis/from-spec",
        content=PETSTORE.encode(),
        headers={**world.admin.headers, "content-type": "application/yaml"},
    )
    assert raw_yaml.status_code == 415
    long = yaml.safe_load(PETSTORE)
    long["info"]["description"] = "x" * 257
    too_long = await world.call("POST", "/apis/from-spec", {"spec": long})
    assert too_long.status_code == 400
    assert too_long.json()["detail"] == "desc: must be at most 256 characters long"
    assert too_long.json()["errors"][0]["pointer"] == "/spec/info/description"
    swagger = await world.call("POST", "/apis/from-spec", {"spec": {"swagger": "2.0"}})
    assert swagger.status_code == 400
    assert "OpenAPI 3" in swagger.json()["detail"]
    assert (await world.call("POST", "/apis/from-spec", {"document": {}})).status_code == 400
    missing_file = await world.client.post(
        f"{world.base}/apis/from-spec",
        files={"other": ("x.yaml", b"a: 1", "application/yaml")},
        headers=world.admin.headers,
    )
    assert missing_file.status_code == 400
    assert (await world.call("GET", "/apis")).json()["total"] == 0  # nothing was stored
