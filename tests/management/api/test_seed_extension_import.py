"""The seed product's vendor extension, ``x-helix-gateway``, read exactly as ``x-portico``:
at the document root (service scope) and on operations (route scope), its plugin names mapped
to Portico's, its ``_``-keys dropped, both extensions in one place refused; and the same
names accepted in revision specs, stored under Portico's."""

from __future__ import annotations

from typing import Any

import pytest

from portico.core.errors import ValidationFailed
from portico.management.api.openapi_import import convert, parse_document
from tests.management.conftest import World, route


def document(root: dict[str, Any] | None, operation: dict[str, Any] | None) -> dict[str, Any]:
    post: dict[str, Any] = {"operationId": "token"}
    if operation is not None:
        post.update(operation)
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "Seed", "version": "1"},
        "paths": {"/oauth/token": {"post": post}},
    }
    if root is not None:
        doc.update(root)
    return doc


def refused(doc: dict[str, Any]) -> list[dict[str, str]]:
    with pytest.raises(ValidationFailed) as caught:
        convert(parse_document(doc))
    return [dict(e) for e in caught.value.errors]


def test_root_and_operation_plugins_are_read_renamed_and_reported() -> None:
    doc = document(
        {"x-helix-gateway": {"plugins": {"request-id": {}, "api-product-enforcer": {}}}},
        {"x-helix-gateway": {"plugins": {"helix-auth": {"mode": "generate", "token_ttl": 60}}}},
    )
    api = convert(parse_document(doc))
    assert api.service_spec["plugins"] == {"request-id": {}, "product-quota": {}}
    assert api.route_spec[0]["plugins"] == {"edge-auth": {"mode": "generate", "token_ttl": 60}}
    assert api.renamed == [
        {
            "pointer": "/x-helix-gateway/plugins/api-product-enforcer",
            "from": "api-product-enforcer",
            "to": "product-quota",
        },
        {
            "pointer": "/paths/~1oauth~1token/post/x-helix-gateway/plugins/helix-auth",
            "from": "helix-auth",
            "to": "edge-auth",
        },
    ]
    assert api.dropped == []
    # the document is stored as it came: names and all
    assert (
        "helix-auth" in api.document["paths"]["/oauth/token"]["post"]["x-helix-gateway"]["plugins"]
    )


def test_underscore_keys_of_a_plugin_block_are_dropped_not_refused() -> None:
    block = {
        "mode": "validate",
        "_meta": {"disable": False},
        "_comment": "fill in the signing secret",
        "validate_auth_type": "jwt-auth",
    }
    api = convert(parse_document(document(None, {"x-helix-gateway": {"plugins": {"x": block}}})))
    assert api.route_spec[0]["plugins"] == {
        "x": {"mode": "validate", "validate_auth_type": "jwt-auth"}
    }
    assert api.dropped == [
        "/paths/~1oauth~1token/post/x-helix-gateway/plugins/x/_meta",
        "/paths/~1oauth~1token/post/x-helix-gateway/plugins/x/_comment",
    ]


def test_x_portico_keeps_its_meta_and_maps_the_seed_names_too() -> None:
    api = convert(
        parse_document(
            document({"x-portico": {"plugins": {"helix-auth": {"_meta": {"order": 99}}}}}, None)
        )
    )
    assert api.service_spec["plugins"] == {"edge-auth": {"_meta": {"order": 99}}}
    assert api.renamed == [
        {"pointer": "/x-portico/plugins/helix-auth", "from": "helix-auth", "to": "edge-auth"}
    ]


@pytest.mark.parametrize("at_root", [True, False])
def test_both_extensions_in_one_place_are_refused_naming_the_conflict(at_root: bool) -> None:
    both = {"x-portico": {"plugins": {}}, "x-helix-gateway": {"plugins": {"cors": {}}}}
    errors = refused(document(both, None) if at_root else document(None, both))
    pointer = "/x-helix-gateway" if at_root else "/paths/~1oauth~1token/post/x-helix-gateway"
    assert errors == [
        {
            "pointer": pointer,
            "detail": "x-portico and x-helix-gateway are both present here: they are read the "
            "same way; keep one",
        }
    ]


def test_the_same_plugin_under_both_names_is_refused() -> None:
    errors = refused(
        document({"x-helix-gateway": {"plugins": {"helix-auth": {}, "edge-auth": {}}}}, None)
    )
    assert errors == [
        {
            "pointer": "/x-helix-gateway/plugins",
            "detail": "plugins 'helix-auth' and 'edge-auth' are the same plugin (edge-auth); "
            "keep one",
        }
    ]


def test_the_seed_extension_has_the_rules_of_x_portico() -> None:
    assert refused(document({"x-helix-gateway": []}, None)) == [
        {"pointer": "/x-helix-gateway", "detail": "x-helix-gateway: must be an object"}
    ]
    assert refused(document({"x-helix-gateway": {"upstream": {}}}, None)) == [
        {
            "pointer": "/x-helix-gateway/upstream",
            "detail": "x-helix-gateway: unknown property 'upstream'; only 'plugins' is supported",
        }
    ]
    doc = document(None, None)
    doc["paths"]["/oauth/token"]["x-helix-gateway"] = {"plugins": {}}
    assert refused(doc) == [
        {
            "pointer": "/paths/~1oauth~1token/x-helix-gateway",
            "detail": "x-helix-gateway is read on the document root and on operations, "
            "not on a path item",
        }
    ]


async def test_the_import_answer_reports_renamings_and_dropped_keys(world: World) -> None:
    doc = document(
        {"x-helix-gateway": {"plugins": {"cors": {"_comment": "any origin"}}}},
        {"x-helix-gateway": {"plugins": {"api-product-enforcer": {}}}},
    )
    answer = await world.call("POST", "/apis/from-spec", {"spec": doc})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["renamedPlugins"] == [
        {
            "pointer": "/paths/~1oauth~1token/post/x-helix-gateway/plugins/api-product-enforcer",
            "from": "api-product-enforcer",
            "to": "product-quota",
        }
    ]
    assert body["droppedKeys"] == ["/x-helix-gateway/plugins/cors/_comment"]
    assert body["revision"]["serviceSpec"]["plugins"] == {"cors": {}}
    assert body["revision"]["routeSpec"][0]["plugins"] == {"product-quota": {}}
    other = document(None, None) | {"info": {"title": "Plain", "version": "1"}}
    plain = await world.call("POST", "/apis/from-spec", {"spec": other})
    assert plain.status_code == 201, plain.text
    assert (plain.json()["renamedPlugins"], plain.json()["droppedKeys"]) == ([], [])


async def test_revision_specs_accept_the_seed_names_and_store_portico_s(world: World) -> None:
    created = await world.api(
        "seed-names",
        [route("/a", plugins={"helix-auth": {"mode": "validate"}})],
        plugins={"api-product-enforcer": {"error_policy": "fail_open"}},
    )
    stored = await world.call("GET", world.revision_path(created))
    assert stored.status_code == 200, stored.text
    assert stored.json()["serviceSpec"]["plugins"] == {
        "product-quota": {"error_policy": "fail_open"}
    }
    assert stored.json()["routeSpec"][0]["plugins"] == {"edge-auth": {"mode": "validate"}}
    patched = await world.call(
        "PUT",
        world.revision_path(created) + "/route-spec",
        {"routeSpec": [route("/a", plugins={"helix-auth": {}, "edge-auth": {}})]},
    )
    assert patched.status_code == 400, patched.text
    assert patched.json()["errors"] == [
        {
            "pointer": "/routeSpec/0/plugins",
            "detail": "$.plugins: plugins 'helix-auth' and 'edge-auth' are the same plugin "
            "(edge-auth); keep one",
        }
    ]
