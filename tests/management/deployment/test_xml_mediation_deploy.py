"""Deploying xml-to-json and json-to-xml: their configuration checked by the runtime's own
models, their schemas generated from them, and the pair refused on one route from any scope
(global, service, route), at deploy, dry-run and when a global plugin would make the pair."""

from __future__ import annotations

from typing import Any

import pytest

from tests.management.conftest import World, route

PAIR = "plugins json-to-xml and xml-to-json cannot be attached to the same route"


async def test_both_on_one_route_is_refused_naming_the_pair(world: World) -> None:
    both = await world.api("both", [route("/q", plugins={"xml-to-json": {}, "json-to-xml": {}})])
    for response in (await world.deploy(both), await world.dry_run(both)):
        assert response.status_code == 400, response.text
        problem = response.json()
        assert problem["type"] == "/problems/plugin-conflict"
        assert problem["detail"] == f"{PAIR} (route '/q')"
        assert problem["errors"] == [{"pointer": "/routeSpec/0/plugins", "detail": PAIR}]
    # from two scopes: the service's and a route's
    scopes = await world.api(
        "scopes",
        [route("/ok"), route("/x", plugins={"json-to-xml": {}})],
        plugins={"xml-to-json": {"soap": {"version": "1.1"}}},
    )
    response = await world.deploy(scopes)
    assert response.status_code == 400
    assert response.json()["errors"] == [{"pointer": "/routeSpec/1/plugins", "detail": PAIR}]
    assert (await world.config()).json()["routes"] == []  # nothing was deployed


async def test_a_global_plugin_that_would_make_the_pair_is_refused(world: World) -> None:
    alone = await world.api("alone", [route("/q", plugins={"xml-to-json": {}})])
    assert (await world.deploy(alone)).status_code == 200
    globals_url = f"/envs/{world.env_id}/global-plugins/json-to-xml"
    refused = await world.call("PUT", globals_url, {})
    assert refused.status_code == 400, refused.text
    assert refused.json()["detail"] == f"{PAIR} (route '/q')"
    listed = await world.call("GET", f"/envs/{world.env_id}/global-plugins")
    assert listed.json()["items"] == []  # not stored
    # and the other way round: a global one first, then a deploy that makes the pair
    other = await world.api("other", [route("/r")])
    assert (await world.deploy(other)).status_code == 200
    snapshot = (await world.config()).json()
    plugins = {r["uri"]: [p["name"] for p in r["plugins"]] for r in snapshot["routes"]}
    assert plugins == {"/q": ["xml-to-json"], "/r": []}


async def test_each_deploys_alone_with_its_defaults(world: World) -> None:
    ids = await world.api(
        "faces",
        [
            route("/soap", plugins={"xml-to-json": {"soap": {"version": "1.2", "action": "a"}}}),
            route("/json", plugins={"json-to-xml": {"property_naming": "PascalCase"}}),
        ],
    )
    assert (await world.deploy(ids)).status_code == 200
    routes = {r["uri"]: r["plugins"][0] for r in (await world.config()).json()["routes"]}
    assert routes["/soap"]["order"] == 440
    assert routes["/soap"]["config"] == {
        "transform_response": True,
        "property_naming": "unchanged",
        "array_item_name": "item",
        "root_element_name": "root",
        "max_body_size": 1_048_576,
        "transform_request": False,
        "request_content_types": ["application/json"],
        "content_types": ["application/xml", "text/xml"],
        "soap": {"version": "1.2", "action": "a"},
    }
    assert routes["/json"]["config"]["content_types"] == ["application/json"]
    assert routes["/json"]["config"]["request_content_types"] == [
        "application/xml",
        "text/xml",
    ]


@pytest.mark.parametrize(
    ("name", "config", "pointer", "reason"),
    [
        ("xml-to-json", {"soap": {"version": "1.3"}}, "/soap/version", "soap.version"),
        ("xml-to-json", {"soap": {"action": "a"}}, "/soap/version", 'property "soap.version"'),
        ("xml-to-json", {"soap": {"version": "1.1", "action": 'a"b'}}, "/soap/action", "action"),
        ("xml-to-json", {"max_body_size": 0}, "/max_body_size", "max_body_size"),
        ("json-to-xml", {"max_body_size": 16_777_217}, "/max_body_size", "max_body_size"),
        ("json-to-xml", {"property_naming": "snake_case"}, "/property_naming", "naming"),
        ("json-to-xml", {"array_item_name": "1st"}, "/array_item_name", "not an XML element"),
        ("xml-to-json", {"root_element_name": "xmlroot"}, "/root_element_name", "not an XML"),
        ("xml-to-json", {"content_types": []}, "/content_types", "content_types"),
        ("xml-to-json", {"content_types": ["xml"]}, "/content_types/0", "content_types"),
        ("json-to-xml", {"request_content_types": ["a/b; q=1"]}, "/request_content_types/0", ""),
        ("json-to-xml", {"soap": {"version": "1.1"}}, "/soap", 'property "soap" is not allowed'),
        ("xml-to-json", {"transform_request": "yes"}, "/transform_request", "transform_request"),
    ],
)
async def test_a_bad_configuration_is_refused_naming_the_field(
    world: World, name: str, config: dict[str, Any], pointer: str, reason: str
) -> None:
    ids = await world.api("bad", [route("/b", plugins={name: config})])
    response = await world.deploy(ids)
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["type"] == "/problems/plugin-configuration"
    assert problem["detail"].startswith(f"failed to check the configuration of plugin {name}: ")
    assert reason in problem["detail"]
    assert problem["errors"][0]["pointer"] == f"/routeSpec/0/plugins/{name}{pointer}"


async def test_their_schemas_are_generated_from_the_models(world: World) -> None:
    for name, request_types, answer_types in (
        ("xml-to-json", ["application/json"], ["application/xml", "text/xml"]),
        ("json-to-xml", ["application/xml", "text/xml"], ["application/json"]),
    ):
        found = await world.call("GET", f"/plugin-schemas/{name}")
        assert found.status_code == 200, found.text
        body = found.json()
        assert body["category"] == "Transformation"
        properties = body["schema"]["properties"]
        assert properties["request_content_types"]["default"] == request_types
        assert properties["content_types"]["default"] == answer_types
        assert properties["max_body_size"]["default"] == 1_048_576
        assert properties["array_item_name"]["default"] == "item"
        assert properties["property_naming"]["enum"] == ["camelCase", "PascalCase", "unchanged"]
        assert all(p.get("description") for k, p in properties.items() if k != "_meta")
        assert ("soap" in properties) is (name == "xml-to-json")
