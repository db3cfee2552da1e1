"""``/apis``: API nodes written in the portal or bound to a gateway connection; their OpenAPI
documents; what a body may say and how a refusal names the field."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from sqlalchemy import select

from portico.core.db.engine import Database
from portico.marketplace.node.models import CatalogueNode
from tests.marketplace.catalogue.conftest import (
    OPENAPI_30,
    OPENAPI_31_YAML,
    UNKNOWN_ID,
    new_api,
    pointers,
    refused,
)
from tests.marketplace.conftest import SiteAccount, url


async def test_a_portal_api_is_a_draft_with_custom_source(
    admin_api: httpx.AsyncClient, editor: SiteAccount, owner_org: uuid.UUID
) -> None:
    created = await admin_api.post(
        url("/apis"),
        json={
            "title": "Orders",
            "version": "1.2",
            "overview": "# Orders\n\nPlace and track orders.",
            "documentation": OPENAPI_30,
            "organisation": str(owner_org),
        },
        headers=editor.headers,
    )
    assert created.status_code == 201, created.text
    data = created.json()["data"]
    assert created.headers["location"] == f"/api/admin/v1/apis/{data['id']}"
    assert data["bundle"] == "apis"
    assert data["title"] == "Orders"
    assert data["version"] == "1.2"
    assert data["overview"] == "# Orders\n\nPlace and track orders."
    assert data["documentation"] == OPENAPI_30
    assert data["organisation"] == str(owner_org)
    assert data["moderation_state"] == "draft"
    assert data["published"] is False
    assert data["visibility"] == "internal"
    assert data["source"] == {
        "type": "custom",
        "connection_id": None,
        "remote_id": None,
        "uuid": None,
        "revision": None,
    }
    got = await admin_api.get(url(f"/apis/{data['id']}"), headers=editor.headers)
    assert got.status_code == 200
    assert got.json() == {"data": data}
    # a list leaves the documents out
    listed = await admin_api.get(url("/apis"), headers=editor.headers)
    assert listed.json()["data"] == [{k: v for k, v in data.items() if k != "documentation"}]


async def test_the_least_an_api_needs_is_a_title(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    data = await new_api(admin_api, editor, title="Bare")
    assert (data["version"], data["overview"], data["documentation"]) == ("", "", None)
    assert data["organisation"] is None


async def test_an_api_bound_to_a_connection_is_imported(
    admin_api: httpx.AsyncClient, editor: SiteAccount, connection: uuid.UUID
) -> None:
    data = await new_api(
        admin_api,
        editor,
        connection_id=str(connection),
        api_id="orders-v1",
        uuid="7c0a0f5e",
        revision="r3",
    )
    assert data["source"] == {
        "type": "imported",
        "connection_id": str(connection),
        "remote_id": "orders-v1",
        "uuid": "7c0a0f5e",
        "revision": "r3",
    }
    assert data["moderation_state"] == "draft"
    # without an api_id, the binding alone
    bare = await new_api(admin_api, editor, connection_id=str(connection))
    assert bare["source"]["type"] == "imported"
    assert bare["source"]["remote_id"] is None


async def test_one_node_per_remote_api_of_a_connection(
    admin_api: httpx.AsyncClient, editor: SiteAccount, connection: uuid.UUID, database: Database
) -> None:
    first = await new_api(admin_api, editor, connection_id=str(connection), api_id="orders")
    again = await admin_api.post(
        url("/apis"),
        json={"title": "Again", "connection_id": str(connection), "api_id": "orders"},
        headers=editor.headers,
    )
    problem = refused(again, 409)
    assert problem["type"] == "/problems/conflict"
    assert first["id"] in problem["detail"] and "api_id 'orders'" in problem["detail"]
    # the same remote id is free for a product of the connection, and for another connection
    product = await admin_api.post(
        url("/products"),
        json={"title": "P", "connection_id": str(connection), "product_id": "orders"},
        headers=editor.headers,
    )
    assert product.status_code == 201, product.text
    async with database.session() as session:
        titles = list(await session.scalars(select(CatalogueNode.title)))
    assert sorted(titles) == ["Orders", "P"]


async def test_remote_fields_need_a_connection(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    for field in ("api_id", "uuid", "revision"):
        response = await admin_api.post(
            url("/apis"), json={"title": "X", field: "abc"}, headers=editor.headers
        )
        assert pointers(response) == {
            f"/{field}": f"$.{field}: only with connection_id (an API or product bound to a "
            "connection)"
        }


async def test_an_unknown_connection_or_organisation_is_named(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    response = await admin_api.post(
        url("/apis"), json={"title": "X", "connection_id": UNKNOWN_ID}, headers=editor.headers
    )
    assert refused(response)["type"] == "/problems/unknown-reference"
    assert pointers(response) == {"/connection_id": f"no gateway connection has id {UNKNOWN_ID}"}
    response = await admin_api.post(
        url("/apis"), json={"title": "X", "organisation": UNKNOWN_ID}, headers=editor.headers
    )
    assert pointers(response) == {"/organisation": f"no portal organisation has id {UNKNOWN_ID}"}


async def test_documentation_as_json_or_yaml_text_is_stored_as_the_object(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    from_json = await new_api(admin_api, editor, documentation=json.dumps(OPENAPI_30))
    assert from_json["documentation"] == OPENAPI_30
    from_yaml = await new_api(admin_api, editor, documentation=OPENAPI_31_YAML)
    assert from_yaml["documentation"] == {
        "openapi": "3.1.0",
        "info": {"title": "Payments", "version": "2.1"},
        "components": {"schemas": {"Payment": {"type": "object"}}},
    }


async def test_documents_that_are_not_openapi_3_are_refused_naming_documentation(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database
) -> None:
    swagger = {"swagger": "2.0", "info": {"title": "Old", "version": "1"}, "paths": {}}
    no_paths = {"openapi": "3.0.0", "info": {"title": "T", "version": "1"}}
    cases: list[tuple[Any, str]] = [
        (swagger, "not an OpenAPI 3.0/3.1 document: no 'openapi'"),
        ({**OPENAPI_30, "openapi": "3.2.0"}, "'openapi' is not 3.0.x or 3.1.x"),
        ({**OPENAPI_30, "info": {"title": "T"}}, "no 'info.version' (a string)"),
        (no_paths, "no 'paths' object"),
        ("openapi: 3.0.0\ninfo: [title: broken\n", "in JSON or YAML: not valid JSON or YAML"),
        ("a: &x 1\nb: *x\n", "YAML anchors and aliases are not supported"),
        ("[1, 2]", "must be a JSON object"),
    ]
    for document, words in cases:
        response = await admin_api.post(
            url("/apis"), json={"title": "X", "documentation": document}, headers=editor.headers
        )
        found = pointers(response)
        assert list(found) == ["/documentation"], response.text
        assert words in found["/documentation"], (words, found)
    async with database.session() as session:
        assert list(await session.scalars(select(CatalogueNode))) == []


async def test_malformed_bodies_name_their_fields(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "/title"),
        ({"title": ""}, "/title"),
        ({"title": "   "}, "/title"),
        ({"title": "a\x07b"}, "/title"),
        ({"title": "x" * 256}, "/title"),
        ({"title": 5}, "/title"),
        ({"title": "X", "version": "v" * 65}, "/version"),
        ({"title": "X", "overview": "bell \x07"}, "/overview"),
        ({"title": "X", "organisation": "not-a-uuid"}, "/organisation"),
        ({"title": "X", "connection_id": None}, "/connection_id"),
        ({"title": "X", "documentation": 12}, "/documentation"),
        ({"title": "X", "colour": "red"}, "/colour"),
        ({"title": "X", "moderation_state": "published"}, "/moderation_state"),
    ]
    for body, pointer in cases:
        response = await admin_api.post(url("/apis"), json=body, headers=editor.headers)
        assert pointer in pointers(response), (body, response.text)
    # JSON can carry an unpaired surrogate, which no store can encode
    for field in ("title", "version", "overview", "api_id"):
        raw = f'{{"title": "X", "connection_id": "{UNKNOWN_ID}", "{field}": "a\\ud800"}}'
        response = await admin_api.post(
            url("/apis"),
            content=raw.encode(),
            headers={**editor.headers, "content-type": "application/json"},
        )
        assert list(pointers(response)) == [f"/{field}"], response.text


async def test_patch_changes_only_the_fields_sent(
    admin_api: httpx.AsyncClient, editor: SiteAccount, owner_org: uuid.UUID, clock: Any
) -> None:
    api = await new_api(
        admin_api,
        editor,
        version="1",
        overview="old",
        documentation=OPENAPI_30,
        organisation=str(owner_org),
    )
    path = url(f"/apis/{api['id']}")
    clock.advance(__import__("datetime").timedelta(minutes=5))
    changed = await admin_api.patch(path, json={"title": "Orders v2"}, headers=editor.headers)
    assert changed.status_code == 200, changed.text
    data = changed.json()["data"]
    assert data["title"] == "Orders v2"
    assert (data["version"], data["overview"], data["documentation"]) == ("1", "old", OPENAPI_30)
    assert data["organisation"] == str(owner_org)
    assert data["updated_at"] > api["updated_at"]
    assert data["created_at"] == api["created_at"]

    everything = await admin_api.patch(
        path,
        json={
            "version": "2",
            "overview": "new",
            "documentation": OPENAPI_31_YAML,
            "organisation": None,
        },
        headers=editor.headers,
    )
    data = everything.json()["data"]
    assert (data["version"], data["overview"], data["organisation"]) == ("2", "new", None)
    assert data["documentation"]["openapi"] == "3.1.0"
    cleared = await admin_api.patch(path, json={"documentation": None}, headers=editor.headers)
    assert cleared.json()["data"]["documentation"] is None
    assert (await admin_api.get(path, headers=editor.headers)).json()["data"] == (
        cleared.json()["data"]
    )


async def test_patch_refusals_name_the_field_and_change_nothing(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    api = await new_api(admin_api, editor)
    path = url(f"/apis/{api['id']}")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"title": None}, "/title"),
        ({"title": ""}, "/title"),
        ({"version": None}, "/version"),
        ({"overview": None}, "/overview"),
        ({"organisation": UNKNOWN_ID}, "/organisation"),
        ({"documentation": {"openapi": "3.0.0"}}, "/documentation"),
        ({"visibility": "public"}, "/visibility"),
        ({"connection_id": UNKNOWN_ID}, "/connection_id"),
        ({"description": "a product's"}, "/description"),
    ]
    for body, pointer in cases:
        response = await admin_api.patch(path, json={"title": "Y", **body}, headers=editor.headers)
        assert pointer in pointers(response), (body, response.text)
    assert (await admin_api.get(path, headers=editor.headers)).json()["data"] == api
    empty = await admin_api.patch(path, json={}, headers=editor.headers)
    assert empty.status_code == 200
    assert empty.json()["data"] == api


async def test_unknown_and_malformed_ids_are_404(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    product = (
        await admin_api.post(url("/products"), json={"title": "P"}, headers=editor.headers)
    ).json()["data"]
    for node in (UNKNOWN_ID, "not-a-uuid", "1", product["id"]):
        for method, body in (("GET", None), ("PATCH", {"title": "Z"}), ("DELETE", None)):
            response = await admin_api.request(
                method, url(f"/apis/{node}"), json=body, headers=editor.headers
            )
            problem = refused(response, 404)
            assert problem["detail"] == "API not found", (method, node)
    assert (await admin_api.get(url(f"/products/{product['id']}"), headers=editor.headers)).json()[
        "data"
    ] == product
