"""Property: whatever JSON a client POSTs as an upstream, the answer is 201 or 400, never a
500, and a 400 stores nothing.

Bodies are random JSON, random objects keyed by the real field names, and specifications
built from the real models' field names with values that are often right and often not, so
that both outcomes (and every validation path in between) are reached.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from sqlalchemy import func, select

from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.management.upstream.healthcheck import (
    ActiveHealthCheck,
    ActiveHealthy,
    ActiveUnhealthy,
    HealthChecks,
    PassiveHealthCheck,
    PassiveHealthy,
    PassiveUnhealthy,
)
from portico.management.upstream.models import Upstream
from portico.management.upstream.schemas import UpstreamCreate
from portico.management.upstream.specification import (
    UpstreamDiscovery,
    UpstreamKeepalivePool,
    UpstreamNode,
    UpstreamSpecification,
    UpstreamTimeout,
)
from tests.conftest import Account, Org


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of ``choices``, each drawn in proportion to its weight (``st.one_of`` does not
    weigh: it draws a branch, and identical branches count once)."""
    branches = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(branches).flatmap(lambda strategy: strategy)


# Which fields hold another model (a list of one for nodes); every other field is a leaf.
NESTED: dict[type[BaseModel], dict[str, type[BaseModel] | list[type[BaseModel]]]] = {
    UpstreamSpecification: {
        "nodes": [UpstreamNode],
        "discovery": UpstreamDiscovery,
        "timeout": UpstreamTimeout,
        "keepalivePool": UpstreamKeepalivePool,
        "checks": HealthChecks,
    },
    HealthChecks: {"active": ActiveHealthCheck, "passive": PassiveHealthCheck},
    ActiveHealthCheck: {"healthy": ActiveHealthy, "unhealthy": ActiveUnhealthy},
    PassiveHealthCheck: {"healthy": PassiveHealthy, "unhealthy": PassiveUnhealthy},
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
# Values that fit some field somewhere: enumeration members, hosts, paths, counts, statuses.
# fmt: off
PLAUSIBLE_STRINGS = [
    "http", "https", "tcp", "grpc", "dns", "roundrobin", "chash", "least_conn", "header",
    "consumer", "vars", "pass", "node", "rewrite", "127.0.0.1", "backend.svc",
    "api.example.com:8443", "[::1]:53", "/healthz", "X-User-Id", "", "a\x00b", "bad host",
]
# fmt: on
plausible = st.one_of(
    st.sampled_from(PLAUSIBLE_STRINGS),
    st.integers(min_value=-2, max_value=70000),
    st.floats(min_value=0, max_value=4000, allow_nan=False),
    st.lists(st.integers(min_value=198, max_value=601), max_size=4),
    st.sampled_from([None, True, 1.5, "8080", 1e308, 10**30]),
)


def model_objects(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects keyed by ``model``'s real field names (any subset, sometimes one unknown key),
    valued by nested objects, plausible leaves or random JSON."""
    nested = NESTED.get(model, {})
    values: dict[str, st.SearchStrategy[Any]] = {}
    for name in model.model_fields:
        inner = nested.get(name)
        if isinstance(inner, list):
            value = st.lists(model_objects(inner[0]), min_size=0, max_size=3)
        elif inner is not None:
            value = model_objects(inner)
        else:
            value = plausible
        values[name] = weighted((3, value), (1, json_values))
    unknown = st.dictionaries(
        st.sampled_from(["extra", "hash_on", "metadata"]), json_values, max_size=1
    )
    return st.builds(
        lambda known, more: {**known, **more}, st.fixed_dictionaries({}, optional=values), unknown
    )


# A specification that validates, every field set; subsets of it mostly validate too.
TEMPLATE: dict[str, Any] = {
    "scheme": "https",
    "timeout": {"connect": 2.5, "send": 10, "read": 30.0},
    "retries": 2,
    "retryTimeout": 5.0,
    "keepalivePool": {"size": 64, "idle_timeout": 30.0, "requests": 500},
    "checks": {
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
            "type": "tcp",
            "healthy": {"successes": 0, "http_statuses": [200]},
            "unhealthy": {
                "http_failures": 6,
                "tcp_failures": 3,
                "timeouts": 9,
                "http_statuses": [503],
            },
        },
    },
}


def subsets(template: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            key: subsets(value) if isinstance(value, dict) else st.just(value)
            for key, value in template.items()
        },
    )


NODE: dict[str, Any] = {"nodes": [{"host": "127.0.0.1", "port": 80}]}
good_nodes = st.lists(
    st.fixed_dictionaries(
        {
            "host": st.sampled_from(["127.0.0.1", "backend.svc", "::1"]),
            "port": st.integers(1, 65535),
        },
        optional={"weight": st.integers(0, 100), "priority": st.integers(-5, 5)},
    ),
    min_size=1,
    max_size=3,
)
targets = st.one_of(
    good_nodes.map(lambda nodes: {"nodes": nodes}),
    st.just({"discovery": {"type": "dns", "serviceName": "orders.svc:8080"}}),
)
# fields that are only valid together; the chash key is the specification's one free text
pairings = st.one_of(
    st.just({}),
    st.fixed_dictionaries(
        {
            "type": st.just("chash"),
            "hashOn": st.sampled_from(["header", "cookie", "vars"]),
            "key": st.one_of(st.sampled_from(["X-User-Id", "a\x00b"]), st.text(max_size=5)),
        }
    ),
    st.just({"type": "chash", "hashOn": "consumer"}),
    st.just({"type": "least_conn", "passHost": "node"}),
    st.just({"passHost": "rewrite", "upstreamHost": "api.example.com:8443"}),
)
valid_specifications = st.builds(
    lambda spec, pairing, target: {**spec, **pairing, **target},
    subsets(TEMPLATE),
    pairings,
    targets,
)
specifications = weighted(
    (6, valid_specifications),
    (
        2,
        st.builds(
            lambda spec, target: {**target, **spec}, model_objects(UpstreamSpecification), targets
        ),
    ),
    (1, model_objects(UpstreamSpecification)),
    (1, json_values),
)
names = weighted(
    (6, st.from_regex(r"[a-z][a-z0-9-]{0,30}", fullmatch=True)),
    (2, st.text(max_size=110)),
    (1, st.sampled_from([" orders", "x" * 101, "a\x00b", ""])),
    (1, json_values),
)
descriptions = weighted(
    (3, st.text(max_size=30)),
    (1, st.sampled_from(["x" * 1001, "line\nbreak", "a\x00b"])),
    (1, json_values),
)
upstreams = st.fixed_dictionaries(
    {"name": names, "specification": specifications}, optional={"description": descriptions}
)
bodies = weighted(
    (6, upstreams),
    (
        1,
        st.fixed_dictionaries(
            {},
            optional={
                field.alias or name: json_values
                for name, field in UpstreamCreate.model_fields.items()
            },
        ),
    ),
    (1, json_values),
)


async def counts(database: Database, env_id: uuid.UUID) -> tuple[int, int]:
    async with database.session() as session:
        rows = await session.scalar(
            select(func.count()).select_from(Upstream).where(Upstream.environment_id == env_id)
        )
        entries = await session.scalar(
            select(func.count()).select_from(AuditEntry).where(AuditEntry.entity_type == "upstream")
        )
    return int(rows or 0), int(entries or 0)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=bodies)
# hazards random drawing rarely reaches: text the store cannot hold, numbers at the edges
@example(body={"name": "a", "specification": {**NODE, "type": "chash", "key": "a\x00b"}})
@example(body={"name": "a\x00b", "specification": NODE})
@example(body={"name": "a", "description": "a\x00b", "specification": NODE})
@example(body={"name": "a", "specification": {**NODE, "keepalivePool": {"idle_timeout": 1e308}}})
@example(body={"name": "a", "specification": {**NODE, "retryTimeout": 10**400}})
@example(body={"name": "a", "specification": {**NODE, "retries": 10**400}})
@example(body={"name": "a", "specification": {**NODE, **TEMPLATE}})
async def test_any_body_is_201_or_400_and_a_400_stores_nothing(
    client: httpx.AsyncClient, database: Database, org: Org, admin: Account, body: Any
) -> None:
    # a fresh environment per example: a 409 for a name drawn twice is not what is tested
    env = await client.post(
        f"/api/orgs/{org.id}/envs", json={"name": f"e-{uuid.uuid4().hex}"}, headers=admin.headers
    )
    env_id = uuid.UUID(env.json()["id"])
    before = await counts(database, env_id)
    response = await client.post(
        f"/api/orgs/{org.id}/envs/{env_id}/upstreams",
        content=json.dumps(body).encode(),
        headers={**admin.headers, "content-type": "application/json"},
    )
    assert response.status_code in (201, 400), (body, response.text)
    event(f"status {response.status_code}")
    after = await counts(database, env_id)
    if response.status_code == 400:
        assert after == before
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["errors"], response.text
    else:
        assert after == (before[0] + 1, before[1] + 1)
        # what is stored is a valid specification again (on PostgreSQL not always in the same
        # JSON spelling: jsonb writes 1e308 as 1 and 308 zeros, which reads back as an integer)
        stored = response.json()["specification"]
        UpstreamSpecification.model_validate(stored)
        upstream = await client.get(
            f"/api/orgs/{org.id}/envs/{env_id}/upstreams/{response.json()['id']}",
            headers=admin.headers,
        )
        assert upstream.json() == response.json()


def test_nested_field_names_are_the_models() -> None:
    for model, fields in NESTED.items():
        assert set(fields) <= set(model.model_fields), model.__name__
