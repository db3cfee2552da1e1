"""Upstreams over HTTP: success of every endpoint, bad input, permissions, tenancy, audit."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.management.upstream.models import Upstream
from tests.conftest import Account, Factory, Org

# Every field of the seed's health-check table set to a value other than its default.
CHECKS: dict[str, Any] = {
    "active": {
        "type": "https",
        "http_path": "/healthz",
        "host": "api.internal",
        "port": 9000,
        "timeout": 3,
        "concurrency": 4,
        "healthy": {"interval": 5, "successes": 3, "http_statuses": [200, 204]},
        "unhealthy": {
            "interval": 2,
            "http_failures": 3,
            "tcp_failures": 4,
            "timeouts": 5,
            "http_statuses": [500, 502],
        },
    },
    "passive": {
        "type": "https",
        "healthy": {"successes": 7, "http_statuses": [200, 201]},
        "unhealthy": {
            "http_failures": 6,
            "tcp_failures": 3,
            "timeouts": 9,
            "http_statuses": [502, 503, 504],
        },
    },
}
SPECIFICATION: dict[str, Any] = {
    "nodes": [
        {"host": "10.0.0.1", "port": 8080, "weight": 3},
        {"host": "backend-2.internal", "port": 8080},
    ],
    "checks": CHECKS,
}
# What is stored and returned for SPECIFICATION: the rest filled with APISIX's defaults.
STORED: dict[str, Any] = {
    "scheme": "http",
    "nodes": [
        {"host": "10.0.0.1", "port": 8080, "weight": 3, "priority": 0},
        {"host": "backend-2.internal", "port": 8080, "weight": 1, "priority": 0},
    ],
    "discovery": None,
    "type": "roundrobin",
    "hashOn": "vars",
    "key": None,
    "timeout": {"connect": 60.0, "send": 60.0, "read": 60.0},
    "retries": None,
    "retryTimeout": 0.0,
    "passHost": "pass",
    "upstreamHost": None,
    "keepalivePool": {"size": 320, "idle_timeout": 60.0, "requests": 1000},
    "checks": CHECKS,
}
MINIMAL: dict[str, Any] = {"nodes": [{"host": "127.0.0.1", "port": 80}]}
DISCOVERY: dict[str, Any] = {"discovery": {"type": "dns", "serviceName": "orders.svc:8080"}}
MANAGE_DENIED = "missing permission 'upstream.manage'"


def url(org: Org, env_id: str | uuid.UUID, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/envs/{env_id}/upstreams{suffix}"


async def new_env(client: httpx.AsyncClient, org: Org, who: Account, name: str) -> str:
    response = await client.post(
        f"/api/orgs/{org.id}/envs", json={"name": name}, headers=who.headers
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def create(
    client: httpx.AsyncClient, org: Org, env_id: str, who: Account, **body: object
) -> httpx.Response:
    body.setdefault("specification", MINIMAL)
    return await client.post(url(org, env_id), json=body, headers=who.headers)


async def stored_count(database: Database) -> tuple[int, int]:
    """(upstream rows, upstream audit entries): what a failed request must not change."""
    async with database.session() as session:
        rows = await session.scalar(select(func.count()).select_from(Upstream))
        entries = await session.scalar(
            select(func.count()).select_from(AuditEntry).where(AuditEntry.entity_type == "upstream")
        )
    return int(rows or 0), int(entries or 0)


@pytest.fixture
async def env(client: httpx.AsyncClient, org: Org, admin: Account) -> str:
    return await new_env(client, org, admin, "prod")


async def test_create_read_list_replace_patch_delete(
    client: httpx.AsyncClient, org: Org, admin: Account, env: str
) -> None:
    created = await create(
        client, org, env, admin, name="orders", description="orders", specification=SPECIFICATION
    )
    assert created.status_code == 201, created.text
    upstream = created.json()
    assert set(upstream) == {
        "id",
        "orgId",
        "environmentId",
        "name",
        "description",
        "specification",
        "createdAt",
        "updatedAt",
    }
    assert upstream["orgId"] == str(org.id) and upstream["environmentId"] == env
    assert upstream["name"] == "orders" and upstream["description"] == "orders"
    assert upstream["specification"] == STORED
    one = url(org, env, f"/{upstream['id']}")

    assert (await client.get(one, headers=admin.headers)).json() == upstream
    listed = (await client.get(url(org, env), headers=admin.headers)).json()
    assert listed == {"items": [upstream], "page": 1, "size": 20, "total": 1}
    # the environment is untouched by its upstream, and is the one the upstream names
    detail = await client.get(f"/api/orgs/{org.id}/envs/{env}", headers=admin.headers)
    assert detail.status_code == 200 and detail.json()["id"] == upstream["environmentId"]
    assert detail.json()["name"] == "prod"

    # PUT replaces everything: what the new specification leaves out is back to its default
    replaced = await client.put(
        one,
        json={"name": "orders-v2", "description": "", "specification": DISCOVERY},
        headers=admin.headers,
    )
    assert replaced.status_code == 200, replaced.text
    body = replaced.json()
    assert (body["name"], body["description"], body["id"]) == ("orders-v2", "", upstream["id"])
    assert body["specification"] == {**STORED, **DISCOVERY, "nodes": None, "checks": None}
    incomplete = await client.put(
        one, json={"name": "x", "specification": MINIMAL}, headers=admin.headers
    )
    assert incomplete.status_code == 400
    assert incomplete.json()["errors"] == [
        {"pointer": "/description", "detail": "required property 'description' not found"}
    ]

    # PATCH changes only what it names ...
    patched = await client.patch(one, json={"description": "v2"}, headers=admin.headers)
    assert patched.status_code == 200, patched.text
    assert patched.json()["description"] == "v2" and patched.json()["name"] == "orders-v2"
    assert patched.json()["specification"] == body["specification"]
    # ... but a specification it names replaces the stored one whole (no merge)
    patched = await client.patch(
        one, json={"specification": {**SPECIFICATION, "retries": 2}}, headers=admin.headers
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["specification"] == {**STORED, "retries": 2}
    patched = await client.patch(
        one, json={"specification": {"checks": {"passive": {}}, **MINIMAL}}, headers=admin.headers
    )
    spec = patched.json()["specification"]
    assert spec["nodes"][0]["host"] == "127.0.0.1" and spec["retries"] is None
    assert (
        spec["checks"]["active"] is None and spec["checks"]["passive"]["healthy"]["successes"] == 5
    )
    assert (await client.get(one, headers=admin.headers)).json() == patched.json()

    deleted = await client.delete(one, headers=admin.headers)
    assert deleted.status_code == 204 and deleted.content == b""
    missing = await client.get(one, headers=admin.headers)
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.json()["detail"] == "upstream not found"
    assert (await client.get(url(org, env), headers=admin.headers)).json()["total"] == 0


async def test_every_change_is_audited_with_before_and_after(
    client: httpx.AsyncClient, org: Org, admin: Account, env: str
) -> None:
    created = (await create(client, org, env, admin, name="a", specification=SPECIFICATION)).json()
    one = url(org, env, f"/{created['id']}")
    patched = (await client.patch(one, json={"name": "b"}, headers=admin.headers)).json()
    put_body = {"name": "c", "description": "d", "specification": MINIMAL}
    replaced = (await client.put(one, json=put_body, headers=admin.headers)).json()
    assert (await client.delete(one, headers=admin.headers)).status_code == 204

    log = await client.get(
        f"/api/orgs/{org.id}/audit-log?entityId={created['id']}", headers=admin.headers
    )
    entries = log.json()["items"]
    assert [e["action"] for e in entries] == [
        "upstream.delete",
        "upstream.update",
        "upstream.update",
        "upstream.create",
    ]
    delete, put, patch, create_ = entries
    assert all(
        e["entityType"] == "upstream" and e["actor"]["email"] == admin.email for e in entries
    )
    assert create_["before"] is None and create_["after"] == created
    assert create_["after"]["specification"]["checks"] == CHECKS
    assert patch["before"] == created and patch["after"] == patched
    assert put["before"] == patched and put["after"] == replaced
    assert delete["before"] == replaced and delete["after"] is None


# (body, pointer, detail or None): each posted on its own; nothing may be stored.
A = "/specification/checks/active"
BAD_BODIES: list[tuple[dict[str, Any], str, str | None]] = [
    (
        {"name": "a", "specification": {"nodes": [{"host": "h", "port": "8080"}]}},
        "/specification/nodes/0/port",
        "$.specification.nodes[0].port: integer expected",
    ),
    (
        {"name": "a", "specification": {"nodes": [{"host": "h", "port": 70000}]}},
        "/specification/nodes/0/port",
        "$.specification.nodes[0].port: must be less than or equal to 65535",
    ),
    (
        {
            "name": "a",
            "specification": {**MINIMAL, "checks": {"active": {"healthy": {"timeouts": 1}}}},
        },
        f"{A}/healthy/timeouts",
        "property 'timeouts' is not allowed",
    ),
    (
        {
            "name": "a",
            "specification": {**MINIMAL, "checks": {"active": {"healthy": {"successes": 0}}}},
        },
        f"{A}/healthy/successes",
        "$.specification.checks.active.healthy.successes: must be greater than or equal to 1",
    ),
    (
        {"name": "a", "specification": {**MINIMAL, **DISCOVERY}},
        "/specification/discovery",
        "$.specification.discovery: nodes and discovery are mutually exclusive",
    ),
    (
        {"name": "a", "specification": {}},
        "/specification/nodes",
        "$.specification.nodes: either nodes or discovery is required",
    ),
    ({"name": "a", "specification": {"nodes": []}}, "/specification/nodes", None),
    (
        {"name": "a", "specification": {**MINIMAL, "checks": {}}},
        "/specification/checks",
        "$.specification.checks: either active or passive is required",
    ),
    (
        {"name": "a", "specification": {**MINIMAL, "type": "chash", "key": "a\x00b"}},
        "/specification/key",
        "$.specification.key: must not contain NUL characters",
    ),
    ({"name": "a", "specification": "127.0.0.1:80"}, "/specification", None),
    ({"name": "a"}, "/specification", "required property 'specification' not found"),
    ({"specification": MINIMAL}, "/name", "required property 'name' not found"),
    (
        {"name": "x" * 101, "specification": MINIMAL},
        "/name",
        "$.name: must be at most 100 characters long",
    ),
    ({"name": "", "specification": MINIMAL}, "/name", None),
    ({"name": " a", "specification": MINIMAL}, "/name", None),
    ({"name": 5, "specification": MINIMAL}, "/name", "$.name: string expected"),
    ({"name": "a\x00", "specification": MINIMAL}, "/name", None),
    (
        {"name": "a\x07b", "specification": MINIMAL},
        "/name",
        "$.name: must not contain control characters",
    ),
    (
        {"name": "a", "description": "bell\x07", "specification": MINIMAL},
        "/description",
        "$.description: must not contain control characters other than tab and line breaks",
    ),
    ({"name": "a", "description": "x" * 1001, "specification": MINIMAL}, "/description", None),
    ({"name": "a", "description": None, "specification": MINIMAL}, "/description", None),
    (
        {"name": "a", "environmentId": str(uuid.uuid4()), "specification": MINIMAL},
        "/environmentId",
        "property 'environmentId' is not allowed",
    ),
]


async def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(
    client: httpx.AsyncClient, database: Database, org: Org, admin: Account, env: str
) -> None:
    for body, pointer, detail in BAD_BODIES:
        response = await client.post(url(org, env), json=body, headers=admin.headers)
        assert response.status_code == 400, (body, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        problem = response.json()
        assert problem["status"] == 400 and problem["type"] == "/problems/validation"
        assert pointer in [e["pointer"] for e in problem["errors"]], (body, problem)
        if detail is not None:
            assert problem["detail"] == detail, body
    assert await stored_count(database) == (0, 0)

    headers = {**admin.headers, "content-type": "application/json"}
    malformed = await client.post(url(org, env), content=b'{"name": ', headers=headers)
    assert malformed.status_code == 400
    assert malformed.json()["detail"].startswith("malformed JSON")
    empty = await client.post(url(org, env), content=b"", headers=headers)
    assert empty.status_code == 400
    not_object = await client.post(url(org, env), json=["a"], headers=admin.headers)
    assert not_object.status_code == 400
    wrong_type = await client.post(
        url(org, env), content=b"name=a", headers={**admin.headers, "content-type": "text/plain"}
    )
    assert wrong_type.status_code == 415
    assert wrong_type.json()["type"] == "/problems/unsupported-media-type"
    assert await stored_count(database) == (0, 0)


async def test_failed_changes_leave_the_stored_upstream_as_it_was(
    client: httpx.AsyncClient, database: Database, org: Org, admin: Account, env: str
) -> None:
    upstream = (await create(client, org, env, admin, name="a", specification=SPECIFICATION)).json()
    one = url(org, env, f"/{upstream['id']}")
    bad_specification = {**MINIMAL, "checks": {"passive": {"unhealthy": {"timeouts": "7"}}}}
    attempts = [
        (
            "PATCH",
            {"specification": bad_specification},
            "/specification/checks/passive/unhealthy/timeouts",
        ),
        ("PATCH", {"name": "b", "specification": {}}, "/specification/nodes"),
        ("PATCH", {"colour": "red"}, "/colour"),
        ("PUT", {"name": "b", "description": "", "specification": bad_specification}, None),
        ("PUT", {"name": "b", "description": ""}, "/specification"),
    ]
    for method, body, pointer in attempts:
        response = await client.request(method, one, json=body, headers=admin.headers)
        assert response.status_code == 400, (method, body, response.text)
        if pointer is not None:
            assert [e["pointer"] for e in response.json()["errors"]] == [pointer]
    for method in ("PUT", "PATCH"):
        wrong_type = await client.request(
            method, one, content=b"{}", headers={**admin.headers, "content-type": "text/plain"}
        )
        assert wrong_type.status_code == 415
    assert (await client.get(one, headers=admin.headers)).json() == upstream
    assert await stored_count(database) == (1, 1)


async def test_names_are_unique_within_an_environment(
    client: httpx.AsyncClient, org: Org, admin: Account, env: str
) -> None:
    first = (await create(client, org, env, admin, name="orders")).json()
    second = (await create(client, org, env, admin, name="billing")).json()
    again = await create(client, org, env, admin, name="orders")
    assert again.status_code == 409
    assert (
        again.json()["detail"] == "an upstream named 'orders' already exists in environment 'prod'"
    )
    # the same name in another environment of the organisation is another upstream
    staging = await new_env(client, org, admin, "staging")
    assert (await create(client, org, staging, admin, name="orders")).status_code == 201

    rename = await client.patch(
        url(org, env, f"/{second['id']}"), json={"name": "orders"}, headers=admin.headers
    )
    assert rename.status_code == 409
    replace = await client.put(
        url(org, env, f"/{second['id']}"),
        json={"name": "orders", "description": "", "specification": MINIMAL},
        headers=admin.headers,
    )
    assert replace.status_code == 409
    # keeping one's own name is no conflict
    same = await client.patch(
        url(org, env, f"/{first['id']}"), json={"name": "orders"}, headers=admin.headers
    )
    assert same.status_code == 200
    listed = (await client.get(url(org, env), headers=admin.headers)).json()
    assert [u["name"] for u in listed["items"]] == ["billing", "orders"]


async def test_listing_sorts_filters_and_stays_in_its_environment(
    client: httpx.AsyncClient, org: Org, admin: Account, env: str
) -> None:
    for name in ("b", "c", "a"):
        assert (await create(client, org, env, admin, name=name)).status_code == 201
    other = await new_env(client, org, admin, "staging")
    await create(client, org, other, admin, name="elsewhere")

    async def names(query: str = "") -> list[str]:
        response = await client.get(url(org, env) + query, headers=admin.headers)
        assert response.status_code == 200, response.text
        return [u["name"] for u in response.json()["items"]]

    assert await names() == ["a", "b", "c"]
    assert await names("?sort=-name") == ["c", "b", "a"]
    assert sorted(await names("?sort=-updatedAt,createdAt")) == ["a", "b", "c"]
    assert await names("?name=b") == ["b"]
    assert await names("?name=elsewhere") == []
    paged = (await client.get(url(org, env) + "?size=2&page=2", headers=admin.headers)).json()
    assert [u["name"] for u in paged["items"]] == ["c"] and paged["total"] == 3
    for bad in ("?colour=red", "?sort=colour", "?size=0", "?page=x", "?name=b%00"):
        response = await client.get(url(org, env) + bad, headers=admin.headers)
        assert response.status_code == 400, bad
        assert response.json()["errors"][0]["parameter"] in {
            "colour",
            "sort",
            "size",
            "page",
            "name",
        }


async def test_permissions(
    client: httpx.AsyncClient,
    factory: Factory,
    org: Org,
    admin: Account,
    viewer: Account,
    env: str,
) -> None:
    upstream = (await create(client, org, env, admin, name="orders")).json()
    one = url(org, env, f"/{upstream['id']}")
    assert (await client.get(url(org, env), headers=viewer.headers)).status_code == 200
    assert (await client.get(one, headers=viewer.headers)).json() == upstream
    full = {"name": "x", "description": "", "specification": MINIMAL}
    for method, target, body in [
        ("POST", url(org, env), full),
        ("PUT", one, full),
        ("PATCH", one, {"name": "x"}),
        ("DELETE", one, None),
    ]:
        denied = await client.request(method, target, json=body, headers=viewer.headers)
        assert denied.status_code == 403, method
        assert denied.json()["detail"] == MANAGE_DENIED
        assert denied.json()["permission"] == "upstream.manage"
    assert (await client.get(one, headers=admin.headers)).json() == upstream

    nobody = await factory.user(org)  # a member without any role
    denied = await client.get(url(org, env), headers=nobody.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'upstream.read'"
    assert (await client.get(url(org, env))).status_code == 401
    assert (await client.post(url(org, env), json=full)).status_code == 401

    publisher = await factory.user(org, roles=("API Publisher",))
    made = await create(client, org, env, publisher, name="billing")
    assert made.status_code == 201, made.text
    mine = url(org, env, f"/{made.json()['id']}")
    assert (await client.put(mine, json=full, headers=publisher.headers)).status_code == 200
    assert (
        await client.patch(mine, json={"description": "d"}, headers=publisher.headers)
    ).status_code == 200
    assert (await client.delete(mine, headers=publisher.headers)).status_code == 204


async def test_not_found(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account, env: str
) -> None:
    upstream = (await create(client, org, env, admin, name="orders")).json()
    staging = await new_env(client, org, admin, "staging")
    full = {"name": "x", "description": "", "specification": MINIMAL}

    async def each_method(collection: str, item: str) -> list[httpx.Response]:
        return [
            await client.get(collection, headers=admin.headers),
            await client.post(collection, json=full, headers=admin.headers),
            await client.get(item, headers=admin.headers),
            await client.put(item, json=full, headers=admin.headers),
            await client.patch(item, json={"name": "x"}, headers=admin.headers),
            await client.delete(item, headers=admin.headers),
        ]

    for env_id in (uuid.uuid4(), "not-a-uuid"):
        for response in await each_method(url(org, env_id), url(org, env_id, f"/{upstream['id']}")):
            assert response.status_code == 404, response.request
            assert response.json()["detail"] == "environment not found"
    # an upstream id reached through another environment of the same organisation
    for upstream_id in (upstream["id"], uuid.uuid4(), "not-a-uuid"):
        responses = (await each_method(url(org, staging), url(org, staging, f"/{upstream_id}")))[2:]
        for response in responses:
            assert response.status_code == 404, response.request
            assert response.json()["detail"] == "upstream not found"

    other_org = await factory.org()
    outsider = await factory.user(other_org, roles=("Administrator",))
    own_env = await new_env(client, other_org, outsider, "prod")
    # our environment through the outsider's organisation; our upstream through their env
    theirs = await client.get(url(other_org, env), headers=outsider.headers)
    assert theirs.status_code == 404 and theirs.json()["detail"] == "environment not found"
    for method in ("GET", "PATCH", "DELETE"):
        response = await client.request(
            method,
            url(other_org, own_env, f"/{upstream['id']}"),
            json={"name": "stolen"} if method == "PATCH" else None,
            headers=outsider.headers,
        )
        assert response.status_code == 404, method
    # and our organisation not at all
    assert (await client.get(url(org, env), headers=outsider.headers)).status_code == 404
    assert (
        await client.get(url(org, env, f"/{upstream['id']}"), headers=admin.headers)
    ).json() == upstream


async def test_an_environment_with_upstreams_cannot_be_deleted(
    client: httpx.AsyncClient, org: Org, admin: Account, env: str
) -> None:
    upstream = (await create(client, org, env, admin, name="orders")).json()
    env_url = f"/api/orgs/{org.id}/envs/{env}"
    refused = await client.delete(env_url, headers=admin.headers)
    assert refused.status_code == 409
    assert refused.json()["detail"] == "environment 'prod' still has upstreams; delete them first"
    assert (
        await client.get(url(org, env, f"/{upstream['id']}"), headers=admin.headers)
    ).json() == upstream
    assert (
        await client.delete(url(org, env, f"/{upstream['id']}"), headers=admin.headers)
    ).status_code == 204
    assert (await client.delete(env_url, headers=admin.headers)).status_code == 204


async def test_openapi_documents_the_specification_model(client: httpx.AsyncClient) -> None:
    document = (await client.get("/api/openapi.json")).json()
    schemas = document["components"]["schemas"]
    create_schema = schemas["UpstreamCreate"]
    assert create_schema["required"] == ["name", "specification"]
    assert create_schema["properties"]["specification"]["$ref"].endswith("/UpstreamSpecification")
    assert schemas["UpstreamSpecification"]["additionalProperties"] is False
    assert set(schemas["UpstreamReplace"]["required"]) == {"name", "description", "specification"}
    patch_spec = schemas["UpstreamUpdate"]["properties"]["specification"]
    assert "Replaces the whole specification" in patch_spec["description"]
    paths = document["paths"]
    assert set(paths["/api/orgs/{orgId}/envs/{envId}/upstreams"]) == {"get", "post"}
    assert set(paths["/api/orgs/{orgId}/envs/{envId}/upstreams/{upstreamId}"]) == {
        "get",
        "put",
        "patch",
        "delete",
    }


def test_fixtures_are_what_they_claim() -> None:
    # every health-check field of the seed's table is set, and none to its default
    from portico.management.upstream.specification import UpstreamSpecification

    defaults = UpstreamSpecification.model_validate(
        {**MINIMAL, "checks": {"active": {}, "passive": {}}}
    ).model_dump(mode="json")["checks"]

    def leaves(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in tree.items():
            if isinstance(value, dict):
                out.update(leaves(value, f"{prefix}{key}."))
            else:
                out[f"{prefix}{key}"] = value
        return out

    given, default = leaves(CHECKS), leaves(defaults)
    assert set(given) == set(default)
    assert [k for k in given if given[k] == default[k]] == []
