"""Structural validation of serviceSpec and routeSpec: the product's exact messages, a
pointer naming the field, structure only (plugin configs are the deploy's business), and
nothing stored on failure — through revision create and both PUT endpoints."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from portico.core.errors import ValidationFailed
from portico.management.revision.specs import (
    MAX_ROUTES,
    check_stored_specs,
    parse_route_spec,
    parse_service_spec,
)
from tests.conftest import Account, Org
from tests.management.revision.support import make_api, make_revision, revisions

DESC_TOO_LONG = "desc: must be at most 256 characters long"
OK: dict[str, Any] = {"uri": "/a", "plugins": {}}

# (route object, pointer under /routeSpec/0, exact detail or None)
BAD_ROUTES: list[tuple[Any, str, str | None]] = [
    # the seed's table, word for word
    ({"uri": "/a"}, "/plugins", "required property 'plugins' not found"),
    ({**OK, "script": ""}, "/script", "$.script: must be at least 10 characters long"),
    ({**OK, "script": "x" * 9}, "/script", "$.script: must be at least 10 characters long"),
    ({**OK, "service_id": ""}, "/service_id", "$.service_id: must be at least 1 characters long"),
    ({**OK, "desc": "x" * 257}, "/desc", DESC_TOO_LONG),
    # the rest of the structure
    ({"plugins": {}}, "/uri", "required property 'uri' not found"),
    ({**OK, "uri": "a"}, "/uri", "$.uri: must start with '/'"),
    ({**OK, "uri": ""}, "/uri", None),
    ({**OK, "uri": "/" + "a" * 4096}, "/uri", "$.uri: must be at most 4096 characters long"),
    ({**OK, "uri": "/a/*/b"}, "/uri", "$.uri: '*' is allowed only as the last character"),
    ({**OK, "uri": "/a/{id}"}, "/uri", None),
    ({**OK, "uri": "/a//b"}, "/uri", None),
    ({**OK, "uri": "/a/../b"}, "/uri", None),
    ({**OK, "uri": "/a b"}, "/uri", None),
    ({**OK, "uri": "/a?x=1"}, "/uri", None),
    ({**OK, "uri": "/a/:"}, "/uri", None),
    ({**OK, "uri": "/:id/:id"}, "/uri", None),
    ({**OK, "uri": "/a%zz"}, "/uri", None),
    ({**OK, "uri": 5}, "/uri", "$.uri: string expected"),
    ({**OK, "name": ""}, "/name", "$.name: must be at least 1 characters long"),
    ({**OK, "name": "x" * 101}, "/name", "$.name: must be at most 100 characters long"),
    ({**OK, "name": None}, "/name", "$.name: string expected"),
    ({**OK, "methods": "GET"}, "/methods", "$.methods: array expected"),
    ({**OK, "methods": []}, "/methods", "$.methods: must have at least 1 items"),
    ({**OK, "methods": ["get"]}, "/methods/0", None),
    ({**OK, "methods": ["GET", "GET"]}, "/methods", "$.methods: must have only unique items"),
    ({**OK, "hosts": ["bad host"]}, "/hosts", None),
    ({**OK, "hosts": ["a.example.com", "A.example.com"]}, "/hosts", None),
    ({**OK, "hosts": ["*"]}, "/hosts", None),
    ({**OK, "priority": "1"}, "/priority", "$.priority: integer expected"),
    ({**OK, "priority": 1.5}, "/priority", "$.priority: integer expected"),
    ({**OK, "priority": 2**31}, "/priority", None),
    ({**OK, "status": 2}, "/status", "$.status: must be 0 (disabled) or 1 (enabled)"),
    ({**OK, "status": True}, "/status", "$.status: integer expected"),
    ({**OK, "plugins": []}, "/plugins", "$.plugins: object expected"),
    (
        {**OK, "plugins": {"key-auth": True}},
        "/plugins/key-auth",
        "$.plugins.key-auth: object expected",
    ),
    ({**OK, "plugins": {"": {}}}, "/plugins", None),
    ({**OK, "plugins": {"p" * 65: {}}}, "/plugins", None),
    ({**OK, "id": "r1"}, "/id", "property 'id' is not allowed"),
    ({**OK, "upstream": {}}, "/upstream", "property 'upstream' is not allowed"),
    ("/a", "", "$: object expected"),
    (None, "", "$: object expected"),
]
BAD_SERVICES: list[tuple[Any, str, str | None]] = [
    ({"desc": "x" * 257}, "/desc", DESC_TOO_LONG),
    ({"name": 1}, "/name", "$.name: string expected"),
    ({"name": "x" * 101}, "/name", "$.name: must be at most 100 characters long"),
    ({"plugins": {"cors": "on"}}, "/plugins/cors", "$.plugins.cors: object expected"),
    ({"hosts": "a.example.com"}, "/hosts", "$.hosts: array expected"),
    ({"hosts": ["a_b.example.com"]}, "/hosts", None),
    ({"routes": []}, "/routes", "property 'routes' is not allowed"),
]


@pytest.fixture
async def api_id(client: httpx.AsyncClient, org: Org, admin: Account) -> str:
    return str((await make_api(client, org, admin))["id"])


async def _refused(response: httpx.Response, pointer: str, detail: str | None) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem: dict[str, Any] = response.json()
    assert problem["errors"][0]["pointer"] == pointer, problem
    if detail is not None:
        assert problem["detail"] == detail
        assert problem["errors"][0]["detail"] == detail
    return problem


@pytest.mark.parametrize(("route", "pointer", "detail"), BAD_ROUTES)
async def test_bad_route_objects(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    api_id: str,
    route: Any,
    pointer: str,
    detail: str | None,
) -> None:
    """Refused by create and by PUT route-spec alike, stored by neither."""
    routes = [OK, route]  # the bad route second: pointers carry its index
    await _refused(
        await client.post(
            revisions(org, api_id), json={"routeSpec": routes}, headers=admin.headers
        ),
        "/routeSpec/1" + pointer,
        detail,
    )
    revision = await make_revision(client, org, admin, api_id)
    await _refused(
        await client.put(
            revisions(org, api_id, f"/{revision['id']}/route-spec"),
            json={"routeSpec": routes},
            headers=admin.headers,
        ),
        "/routeSpec/1" + pointer,
        detail,
    )
    listed = (await client.get(revisions(org, api_id), headers=admin.headers)).json()
    assert [r["routeSpec"] for r in listed["items"]] == [[]]  # only the good revision


@pytest.mark.parametrize(("spec", "pointer", "detail"), BAD_SERVICES)
async def test_bad_service_specs(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    api_id: str,
    spec: Any,
    pointer: str,
    detail: str | None,
) -> None:
    await _refused(
        await client.post(
            revisions(org, api_id), json={"serviceSpec": spec}, headers=admin.headers
        ),
        "/serviceSpec" + pointer,
        detail,
    )
    revision = await make_revision(client, org, admin, api_id, serviceSpec={"name": "kept"})
    await _refused(
        await client.put(
            revisions(org, api_id, f"/{revision['id']}/service-spec"),
            json={"serviceSpec": spec},
            headers=admin.headers,
        ),
        "/serviceSpec" + pointer,
        detail,
    )
    stored = await client.get(revisions(org, api_id, f"/{revision['id']}"), headers=admin.headers)
    assert stored.json()["serviceSpec"] == {"name": "kept"}


async def test_every_error_is_listed_and_the_first_is_the_detail(
    client: httpx.AsyncClient, org: Org, admin: Account, api_id: str
) -> None:
    body = {
        "serviceSpec": {"desc": "x" * 300},
        "routeSpec": [OK, {"uri": "/b"}, {**OK, "script": "", "service_id": ""}],
    }
    # the service spec is checked first, then the routes
    problem = await _refused(
        await client.post(revisions(org, api_id), json=body, headers=admin.headers),
        "/serviceSpec/desc",
        DESC_TOO_LONG,
    )
    assert problem["errors"] == [{"pointer": "/serviceSpec/desc", "detail": DESC_TOO_LONG}]
    problem = await _refused(
        await client.post(
            revisions(org, api_id), json={"routeSpec": body["routeSpec"]}, headers=admin.headers
        ),
        "/routeSpec/1/plugins",
        "required property 'plugins' not found",
    )
    assert problem["errors"] == [
        {"pointer": "/routeSpec/1/plugins", "detail": "required property 'plugins' not found"},
        {
            "pointer": "/routeSpec/2/script",
            "detail": "$.script: must be at least 10 characters long",
        },
        {
            "pointer": "/routeSpec/2/service_id",
            "detail": "$.service_id: must be at least 1 characters long",
        },
    ]


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"routeSpec": {"uri": "/a", "plugins": {}}}, "/routeSpec"),
        ({"routeSpec": None}, "/routeSpec"),
        ({"serviceSpec": []}, "/serviceSpec"),
        ({"serviceSpec": None}, "/serviceSpec"),
        ({"environmentUpstreams": {}}, "/environmentUpstreams"),
        ({"route_spec": []}, "/route_spec"),
        ({"routes": []}, "/routes"),
        ({"routeSpec": [{**OK, "name": "a\x00b"}]}, "/routeSpec/0/name"),
        ({"routeSpec": [{**OK, "plugins": {"a\x00": {}}}]}, "/routeSpec/0/plugins/a\x00"),
    ],
)
async def test_bad_bodies_of_create(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    api_id: str,
    body: dict[str, Any],
    pointer: str,
) -> None:
    response = await client.post(revisions(org, api_id), json=body, headers=admin.headers)
    assert response.status_code == 400, response.text
    assert pointer in [e["pointer"] for e in response.json()["errors"]]
    assert (await client.get(revisions(org, api_id), headers=admin.headers)).json()["total"] == 0


async def test_put_bodies_must_carry_their_spec(
    client: httpx.AsyncClient, org: Org, admin: Account, api_id: str
) -> None:
    revision = await make_revision(client, org, admin, api_id, routeSpec=[OK])
    base = revisions(org, api_id, f"/{revision['id']}")
    for suffix, body, pointer in (
        ("/route-spec", {}, "/routeSpec"),
        ("/route-spec", [OK], ""),
        ("/route-spec", {"routeSpec": [OK], "serviceSpec": {}}, "/serviceSpec"),
        ("/service-spec", {}, "/serviceSpec"),
        ("/service-spec", {"name": "x"}, "/name"),
    ):
        response = await client.put(base + suffix, json=body, headers=admin.headers)
        assert response.status_code == 400, (suffix, body, response.text)
        assert pointer in [e["pointer"] for e in response.json()["errors"]]
    assert (await client.get(base, headers=admin.headers)).json() == revision


async def test_structure_only_plugin_configs_are_not_checked(
    client: httpx.AsyncClient, org: Org, admin: Account, api_id: str
) -> None:
    """Unknown plugins and configs the runtime would refuse are stored; deploy finds them.
    Plugin names are case-sensitive: two spellings are two plugins."""
    plugins = {
        "key-auth": {"header": 5, "nonsense": [1, {"x": None}]},
        "Key-Auth": {},
        "no-such-plugin": {"anything": {"deeply": {"nested": True}}},
        "aggregator-logger": {"endpoint_addr": "http://loki"},  # the runtime refuses this
        "proxy-cache": {"cache_key": ["$request_method"]},  # and this
    }
    created = await make_revision(
        client,
        org,
        admin,
        api_id,
        serviceSpec={"plugins": plugins},
        routeSpec=[{"uri": "/a", "plugins": plugins}],
    )
    assert created["serviceSpec"]["plugins"] == plugins
    assert created["routeSpec"][0]["plugins"] == plugins


async def test_uris_hosts_and_methods_that_are_accepted(
    client: httpx.AsyncClient, org: Org, admin: Account, api_id: str
) -> None:
    uris = [
        "/",
        "/*",
        "/orders",
        "/orders/",
        "/orders/*",
        "/orders*",
        "/v1/orders/:order_id/items/:itemId",
        "/v1/things:batchGet",
        "/files/%20name~x.json",
        "/a-b_c.d/@me/!$&'()+,;=",
    ]
    routes = [
        {
            "uri": uri,
            "plugins": {},
            "methods": [
                "GET",
                "POST",
                "PUT",
                "PATCH",
                "DELETE",
                "HEAD",
                "OPTIONS",
                "CONNECT",
                "TRACE",
                "PURGE",
            ],
            "hosts": ["api.example.com", "*.example.org", "10.0.0.1", "Localhost"],
            "priority": -5,
        }
        for uri in uris
    ]
    created = await make_revision(client, org, admin, api_id, routeSpec=routes)
    assert [r["uri"] for r in created["routeSpec"]] == uris
    assert created["routeSpec"][0]["hosts"] == routes[0]["hosts"]  # stored as sent


@pytest.mark.parametrize(
    ("plugins", "reason"),
    [
        (b'{"p": {"x": NaN}}', "not finite"),
        (b'{"p": {"x": -Infinity}}', "not finite"),
        (b'{"p": {"x": 1e400}}', "not finite"),
        (b'{"p": {"x": "\\ud800"}}', "lone surrogate"),
        (b'{"p": {"\\udc00": 1}}', "lone surrogate"),
        (b'{"\\ud800": {}}', "lone surrogate"),
        (b'{"p": {"x": ' + b"[" * 40 + b"]" * 40 + b"}}", "nested more than 32 levels"),
    ],
)
async def test_json_that_no_store_can_hold_is_refused(
    client: httpx.AsyncClient, org: Org, admin: Account, api_id: str, plugins: bytes, reason: str
) -> None:
    """Python's JSON parser takes these; PostgreSQL's jsonb and JSON responses do not. Plugin
    configs are the only free-form JSON of a spec, so they are where this is checked."""
    for key, pointer in (
        (b'"routeSpec": [{"uri": "/a", "plugins": ', b"/routeSpec/0/plugins"),
        (b'"serviceSpec": {"plugins": ', b"/serviceSpec/plugins"),
    ):
        closing = b"}]}" if key.startswith(b'"routeSpec"') else b"}}"
        response = await client.post(
            revisions(org, api_id),
            content=b"{" + key + plugins + closing,
            headers={**admin.headers, "content-type": "application/json"},
        )
        problem = await _refused(response, pointer.decode(), None)
        assert reason in problem["detail"], problem
    # a surrogate pair is a character like any other
    fine = await client.post(
        revisions(org, api_id),
        content=b'{"serviceSpec": {"plugins": {"p": {"a": "\\ud83d\\ude00"}}}}',
        headers={**admin.headers, "content-type": "application/json"},
    )
    assert fine.status_code == 201 and fine.json()["serviceSpec"]["plugins"]["p"]["a"] == "😀"
    assert (await client.get(revisions(org, api_id), headers=admin.headers)).json()["total"] == 1


async def test_route_limit(
    client: httpx.AsyncClient, org: Org, admin: Account, api_id: str
) -> None:
    too_many = [OK] * (MAX_ROUTES + 1)
    response = await client.post(
        revisions(org, api_id),
        content=json.dumps({"routeSpec": too_many}, separators=(",", ":")).encode(),
        headers={**admin.headers, "content-type": "application/json"},
    )
    await _refused(response, "/routeSpec", f"$.routeSpec: must have at most {MAX_ROUTES} items")
    assert (await client.get(revisions(org, api_id), headers=admin.headers)).json()["total"] == 0


def test_the_parsers_directly() -> None:
    """What deploy and the OpenAPI import call: the same checks, pointers under ``at``."""
    assert parse_route_spec([OK]) == [{**OK, "priority": 0, "status": 1}]
    assert parse_service_spec({}) == {}
    with pytest.raises(ValidationFailed) as failure:
        parse_route_spec([{"uri": "/x"}], at="/paths")
    assert failure.value.errors == [
        {"pointer": "/paths/0/plugins", "detail": "required property 'plugins' not found"}
    ]
    with pytest.raises(ValidationFailed) as failure:
        parse_route_spec({"uri": "/x"})
    assert failure.value.errors[0]["pointer"] == "/routeSpec"
    with pytest.raises(ValidationFailed) as failure:
        check_stored_specs({"desc": "x" * 257}, [{"uri": "/x", "script": ""}])
    assert [e["pointer"] for e in failure.value.errors] == [
        "/serviceSpec/desc",
        "/routeSpec/0/plugins",
        "/routeSpec/0/script",
    ]
    check_stored_specs({}, [{**OK, "priority": 0, "status": 1}])
    # 10 000 broken routes do not make 10 000 messages
    with pytest.raises(ValidationFailed) as failure:
        parse_route_spec([{}] * 1000)
    assert len(failure.value.errors) == 100
