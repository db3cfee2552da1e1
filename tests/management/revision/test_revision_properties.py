"""Property: whatever JSON a client sends as a revision (create) or a route spec (PUT), the
answer is 201/200 or 400, never a 500; a 400 stores nothing (no revision, no partial spec,
no audit entry); what is stored validates again to itself.

Route objects are drawn from the real field names with values that are often right and
often not (lengths at the limits, URIs of every shape, plugin configs of any JSON including
NaN), so both outcomes and every validation path between them are reached.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.management.revision.models import Revision
from portico.management.revision.specs import (
    METHODS,
    RouteObject,
    ServiceSpec,
    parse_route_spec,
    parse_service_spec,
)
from tests.conftest import Account, Org
from tests.management.revision.support import (
    make_api,
    make_env,
    make_revision,
    make_upstream,
    revisions,
)


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    branches = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(branches).flatmap(lambda strategy: strategy)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and ±Infinity included: json.dumps writes them, the server parses them
    | st.text(max_size=12)
    | st.just("\ud800"),  # a lone surrogate: JSON can carry it escaped, no store can hold it
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=3)
plugin_names = weighted(
    (5, st.sampled_from(["key-auth", "Key-Auth", "limit-count", "cors", "no-such-plugin"])),
    (1, st.text(max_size=70)),
)
plugins = weighted(
    (6, st.dictionaries(plugin_names, json_objects, max_size=3)),
    (1, st.dictionaries(plugin_names, json_values, max_size=2)),
    (1, json_values),
)
# fmt: off
URIS = [
    "/", "/*", "/orders", "/orders/:id", "/orders/*", "/orders*", "/v1/a:b", "/a/%20b",
    "orders", "", "/a/*/b", "/a/{id}", "/a//b", "/a/../b", "/a b", "/a?x", "/:", "/:id/:id",
    "/a%zz", "/a\x00b", "/" + "a" * 4096,
]
HOSTS = [
    "api.example.com", "*.example.org", "10.0.0.1", "bad host", "*", "", "a_b.c", "A.example.com",
]
# fmt: on
lengths = st.sampled_from([0, 1, 9, 10, 11, 100, 101, 256, 257])
texts = weighted(
    (3, lengths.map(lambda n: "x" * n)),
    (1, st.text(max_size=20)),
    (1, json_values),
)
route_fields: dict[str, st.SearchStrategy[Any]] = {
    "name": texts,
    "uri": weighted((4, st.sampled_from(URIS)), (1, st.text(max_size=20)), (1, json_values)),
    "methods": weighted(
        (4, st.lists(st.sampled_from([*METHODS, "get", "FETCH"]), max_size=4)),
        (1, json_values),
    ),
    "plugins": plugins,
    "script": texts,
    "service_id": texts,
    "hosts": weighted((3, st.lists(st.sampled_from(HOSTS), max_size=3)), (1, json_values)),
    "priority": weighted(
        (3, st.integers(-5, 5)), (1, st.sampled_from([2**31, -(2**31) - 1, 10**30, 1.5, "1"]))
    ),
    "status": st.sampled_from([0, 1, 2, -1, True, None, "1"]),
    "desc": texts,
}
valid_routes = st.fixed_dictionaries(
    {
        "uri": st.sampled_from(URIS[:8]),
        "plugins": st.dictionaries(plugin_names, json_objects, max_size=2),
    },
    optional={
        "methods": st.lists(st.sampled_from(METHODS), min_size=1, max_size=3, unique=True),
        "priority": st.integers(-5, 5),
        "status": st.sampled_from([0, 1]),
        "script": st.just("return true"),
        "name": st.just("r"),
    },
)
routes = weighted(
    (4, valid_routes),
    (
        4,
        st.builds(
            lambda required, optional, unknown: {**required, **optional, **unknown},
            st.fixed_dictionaries({"uri": route_fields["uri"], "plugins": plugins}),
            st.fixed_dictionaries({}, optional=route_fields),
            st.dictionaries(st.sampled_from(["id", "upstream", "vars"]), json_values, max_size=1),
        ),
    ),
    (2, st.fixed_dictionaries({}, optional=route_fields)),
    (1, json_values),
)
route_specs = weighted((6, st.lists(routes, max_size=4)), (1, json_values))
service_specs = weighted(
    (
        4,
        st.fixed_dictionaries(
            {},
            optional={
                "name": texts,
                "desc": texts,
                "plugins": plugins,
                "hosts": route_fields["hosts"],
            },
        ),
    ),
    (1, st.dictionaries(st.sampled_from(["routes", "id"]), json_values, max_size=1)),
    (1, json_values),
)
# "BINDING" is replaced by a real binding of the org; other values are foreign or malformed
bindings = weighted(
    (3, st.just([])),
    (3, st.just(["BINDING"])),
    (
        1,
        st.lists(
            st.fixed_dictionaries(
                {"environmentId": st.uuids().map(str), "upstreamId": st.uuids().map(str)}
            ),
            max_size=2,
        ),
    ),
    (1, json_values),
)
create_bodies = weighted(
    (
        8,
        st.fixed_dictionaries(
            {},
            optional={
                "serviceSpec": service_specs,
                "routeSpec": route_specs,
                "environmentUpstreams": bindings,
            },
        ),
    ),
    (
        1,
        st.dictionaries(
            st.sampled_from(["routes", "service_spec", "bindings"]), json_values, max_size=2
        ),
    ),
    (1, json_values),
)
put_bodies = weighted(
    (8, st.fixed_dictionaries({"routeSpec": route_specs})),
    (
        1,
        st.fixed_dictionaries(
            {}, optional={"routeSpec": route_specs, "serviceSpec": service_specs}
        ),
    ),
    (1, json_values),
)

_WORLDS: dict[uuid.UUID, dict[str, Any]] = {}


async def world(client: httpx.AsyncClient, org: Org, admin: Account) -> dict[str, Any]:
    """One API, one revision and one real binding per test run (fixtures are shared by all
    examples of a run; the store is not reset between them)."""
    if org.id not in _WORLDS:
        api = await make_api(client, org, admin)
        env = await make_env(client, org, admin, "prod")
        upstream = await make_upstream(client, org, admin, env["id"])
        revision = await make_revision(
            client, org, admin, api["id"], routeSpec=[{"uri": "/", "plugins": {}}]
        )
        binding = {"environmentId": env["id"], "upstreamId": upstream["id"]}
        _WORLDS[org.id] = {"api": api, "revision": revision, "binding": binding}
    return _WORLDS[org.id]


def _with_binding(body: Any, binding: dict[str, str]) -> Any:
    if isinstance(body, dict) and body.get("environmentUpstreams") == ["BINDING"]:
        return {**body, "environmentUpstreams": [binding]}
    return body


async def counts(database: Database) -> tuple[int, int]:
    async with database.session() as session:
        rows = await session.scalar(select(func.count()).select_from(Revision))
        entries = await session.scalar(
            select(func.count()).select_from(AuditEntry).where(AuditEntry.entity_type == "revision")
        )
    return int(rows or 0), int(entries or 0)


async def send(
    client: httpx.AsyncClient, method: str, url: str, body: Any, who: Account
) -> httpx.Response:
    return await client.request(
        method,
        url,
        content=json.dumps(body).encode(),  # NaN as NaN: what a careless client really sends
        headers={**who.headers, "content-type": "application/json"},
    )


SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SETTINGS
@given(body=create_bodies)
@example(body={"routeSpec": [{"uri": "/a"}]})
@example(body={"routeSpec": [{"uri": "/a", "plugins": {}, "script": ""}]})
@example(body={"routeSpec": [{"uri": "/a", "plugins": {"p": {"x": float("nan")}}}]})
@example(
    body={
        "routeSpec": [{"uri": "/a", "plugins": {}}, {"uri": "/b"}],
        "environmentUpstreams": ["BINDING"],
    }
)
@example(body={"serviceSpec": {"desc": "x" * 257}, "routeSpec": [{"uri": "/a", "plugins": {}}]})
@example(
    body={
        "routeSpec": [{"uri": "/a", "plugins": {}}],
        "environmentUpstreams": ["BINDING", "BINDING"],
    }
)
async def test_revision_create_is_201_or_400_and_a_400_stores_nothing(
    client: httpx.AsyncClient, database: Database, org: Org, admin: Account, body: Any
) -> None:
    here = await world(client, org, admin)
    body = _with_binding(body, here["binding"])
    before = await counts(database)
    response = await send(client, "POST", revisions(org, here["api"]["id"]), body, admin)
    assert response.status_code in (201, 400), (body, response.text)
    event(f"status {response.status_code}")
    after = await counts(database)
    if response.status_code == 400:
        assert after == before
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["errors"], response.text
        return
    assert after == (before[0] + 1, before[1] + 1)
    created = response.json()
    assert parse_route_spec(created["routeSpec"]) == created["routeSpec"]
    assert parse_service_spec(created["serviceSpec"]) == created["serviceSpec"]
    got = await client.get(
        revisions(org, here["api"]["id"], f"/{created['id']}"), headers=admin.headers
    )
    assert got.json() == created


@SETTINGS
@given(body=put_bodies)
@example(body={"routeSpec": [{"uri": "/a"}]})
@example(body={"routeSpec": [{"uri": "/a", "plugins": {}, "service_id": ""}]})
@example(
    body={"routeSpec": [{"uri": "/a", "plugins": {}}, {"uri": "/b", "plugins": {}, "script": "x"}]}
)
@example(body={"routeSpec": [{"uri": "/a", "plugins": {"p": {"x": float("inf")}}}]})
async def test_route_spec_put_is_200_or_400_and_a_400_changes_nothing(
    client: httpx.AsyncClient, database: Database, org: Org, admin: Account, body: Any
) -> None:
    here = await world(client, org, admin)
    url = revisions(org, here["api"]["id"], f"/{here['revision']['id']}")
    stored = (await client.get(url, headers=admin.headers)).json()
    before = await counts(database)
    response = await send(client, "PUT", url + "/route-spec", body, admin)
    assert response.status_code in (200, 400), (body, response.text)
    event(f"status {response.status_code}")
    after = await counts(database)
    now = (await client.get(url, headers=admin.headers)).json()
    if response.status_code == 400:
        assert after == before
        assert now == stored  # specs, bindings and updatedAt all as they were
        assert response.json()["errors"], response.text
        return
    assert after == (before[0], before[1] + 1)
    assert now == response.json()
    assert parse_route_spec(now["routeSpec"]) == now["routeSpec"]
    assert now["serviceSpec"] == stored["serviceSpec"]


def test_drawn_field_names_are_the_specs() -> None:
    assert set(route_fields) == set(RouteObject.__annotations__)
    assert {"name", "desc", "plugins", "hosts"} == set(ServiceSpec.__annotations__)
