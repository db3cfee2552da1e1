"""Upstream bindings: add/override, replace, never a silent clear, ownership of environments
and upstreams, and the binding of an environment a revision is live in stays put."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from portico.core.db.engine import Database
from tests.conftest import Account, Factory, Org
from tests.management.revision.support import (
    audit_actions,
    deploy,
    make_api,
    make_env,
    make_revision,
    make_upstream,
    revisions,
)


class World:
    """An API with one revision, environments prod and test with two upstreams each."""

    def __init__(self, client: httpx.AsyncClient, org: Org, admin: Account) -> None:
        self.client, self.org, self.admin = client, org, admin

    async def build(self) -> World:
        self.api = await make_api(self.client, self.org, self.admin)
        self.revision = await make_revision(self.client, self.org, self.admin, self.api["id"])
        self.env: dict[str, str] = {}
        self.upstream: dict[str, str] = {}
        for env in ("prod", "test"):
            self.env[env] = (await make_env(self.client, self.org, self.admin, env))["id"]
            for name in ("a", "b"):
                created = await make_upstream(
                    self.client, self.org, self.admin, self.env[env], name
                )
                self.upstream[f"{env}-{name}"] = created["id"]
        return self

    def binding(self, env: str, upstream: str) -> dict[str, str]:
        return {"environmentId": self.env[env], "upstreamId": self.upstream[f"{env}-{upstream}"]}

    def url(self, suffix: str = "", revision: dict[str, Any] | None = None) -> str:
        rev = revision or self.revision
        return revisions(self.org, self.api["id"], f"/{rev['id']}{suffix}")

    async def patch(
        self, suffix: str, body: Any, revision: dict[str, Any] | None = None
    ) -> httpx.Response:
        return await self.client.patch(
            self.url(suffix, revision), json=body, headers=self.admin.headers
        )

    async def bindings(self, revision: dict[str, Any] | None = None) -> list[dict[str, str]]:
        got = await self.client.get(self.url(revision=revision), headers=self.admin.headers)
        result: list[dict[str, str]] = got.json()["upstreamBindings"]
        return result


@pytest.fixture
async def world(client: httpx.AsyncClient, org: Org, admin: Account) -> World:
    return await World(client, org, admin).build()


def by_env(bindings: list[dict[str, str]]) -> dict[str, str]:
    return {b["environmentId"]: b["upstreamId"] for b in bindings}


async def test_add_overrides_per_environment_and_replace_replaces(world: World) -> None:
    added = await world.patch(
        "/upstream-bindings/add", {"environmentUpstreams": [world.binding("prod", "a")]}
    )
    assert added.status_code == 200, added.text
    assert by_env(added.json()["upstreamBindings"]) == by_env([world.binding("prod", "a")])

    # add keeps the other environments and overrides the one given
    added = await world.patch(
        "/upstream-bindings/add",
        {"environmentUpstreams": [world.binding("test", "a"), world.binding("prod", "b")]},
    )
    assert by_env(added.json()["upstreamBindings"]) == by_env(
        [world.binding("prod", "b"), world.binding("test", "a")]
    )
    # an empty add changes nothing
    same = await world.patch("/upstream-bindings/add", {"environmentUpstreams": []})
    assert same.status_code == 200
    assert same.json()["upstreamBindings"] == added.json()["upstreamBindings"]

    replaced = await world.patch(
        "/upstream-bindings", {"environmentUpstreams": [world.binding("test", "b")]}
    )
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["upstreamBindings"] == [world.binding("test", "b")]
    assert await world.bindings() == [world.binding("test", "b")]

    # an explicit empty list is the one way to clear
    cleared = await world.patch("/upstream-bindings", {"environmentUpstreams": []})
    assert cleared.status_code == 200 and cleared.json()["upstreamBindings"] == []

    assert await audit_actions(world.client, world.org, world.admin, world.revision["id"]) == [
        "revision.bindings",
        "revision.bindings",
        "revision.bindings",
        "revision.bindings",
        "revision.bindings",
        "revision.create",
    ]
    log = await world.client.get(f"/api/orgs/{world.org.id}/audit-log", headers=world.admin.headers)
    newest = log.json()["items"][0]
    assert newest["summary"] == "bindings replaced"
    assert newest["before"]["upstreamBindings"] == [world.binding("test", "b")]
    assert newest["after"]["upstreamBindings"] == []


CONFUSED_BODIES: list[Any] = [
    {},
    [],
    None,
    "environmentUpstreams",
    {"bindings": []},
    {"bindings": [{"environmentId": "E", "upstreamId": "U"}]},
    {"upstreamBindings": [{"environmentId": "E", "upstreamId": "U"}]},
    {"environment_upstreams": []},
    {"environmentUpstreams": {}},
    {"environmentUpstreams": None},
    {"environmentUpstreams": "U"},
    {"environmentUpstreams": ["E", "U"]},
    {"environmentUpstreams": [["E", "U"]]},
    {"environmentUpstreams": [{"environmentId": "E"}]},
    {"environmentUpstreams": [{"environmentId": "E", "upstreamId": "U", "weight": 1}]},
    {"environmentUpstreams": [{"environment_id": "E", "upstream_id": "U"}]},
    {"environmentUpstreams": [{"environmentId": "not-a-uuid", "upstreamId": "U"}]},
    {"environmentUpstreams": [{"environmentId": 5, "upstreamId": "U"}]},
    {"environmentUpstreams": [], "force": True},
    {"environmentUpstreams": [{"environmentId": "E", "upstreamId": "U"}], "mode": "replace"},
]


@pytest.mark.parametrize("suffix", ["/upstream-bindings", "/upstream-bindings/add"])
async def test_a_body_of_unexpected_shape_is_a_400_and_never_clears(
    world: World, suffix: str
) -> None:
    """The product this follows clears every binding when the replace endpoint gets a body
    it does not expect. Here each such body is a 400 naming the field, and changes nothing."""
    await world.patch(
        "/upstream-bindings",
        {"environmentUpstreams": [world.binding("prod", "a"), world.binding("test", "a")]},
    )
    before = await world.bindings()
    env, upstream = world.env["prod"], world.upstream["prod-b"]
    for raw in CONFUSED_BODIES:
        body = _substitute(raw, {"E": env, "U": upstream})
        response = await world.patch(suffix, body)
        assert response.status_code == 400, (body, response.text)
        problem = response.json()
        assert problem["errors"], problem
        assert all("pointer" in e for e in problem["errors"])
        assert await world.bindings() == before, body
    # no body at all, and not JSON at all
    for content, content_type in ((b"", "application/json"), (b"environmentUpstreams=", None)):
        headers = {
            **world.admin.headers,
            **({"content-type": content_type} if content_type else {}),
        }
        response = await world.client.patch(world.url(suffix), content=content, headers=headers)
        assert response.status_code in (400, 415), response.text
    assert await world.bindings() == before


def _substitute(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, names) for k, v in value.items()}
    return value


async def test_pointers_of_the_common_mistakes(world: World) -> None:
    cases: list[tuple[Any, str, str | None]] = [
        ({}, "/environmentUpstreams", "required property 'environmentUpstreams' not found"),
        ({"bindings": []}, "/bindings", None),
        (
            {"environmentUpstreams": {}},
            "/environmentUpstreams",
            "$.environmentUpstreams: array expected",
        ),
        (
            {"environmentUpstreams": ["x"]},
            "/environmentUpstreams/0",
            "$.environmentUpstreams[0]: object expected",
        ),
        (
            {"environmentUpstreams": [{"environmentId": world.env["prod"]}]},
            "/environmentUpstreams/0/upstreamId",
            "required property 'upstreamId' not found",
        ),
    ]
    for body, pointer, detail in cases:
        response = await world.patch("/upstream-bindings", body)
        assert response.status_code == 400
        assert pointer in [e["pointer"] for e in response.json()["errors"]], response.text
        if detail is not None:
            assert response.json()["detail"] == detail


async def test_environments_and_upstreams_must_belong_together(
    world: World, factory: Factory, client: httpx.AsyncClient
) -> None:
    other_org = await factory.org()
    outsider = await factory.user(other_org, roles=("Administrator",))
    foreign_env = (await make_env(client, other_org, outsider, "prod"))["id"]
    foreign_upstream = (await make_upstream(client, other_org, outsider, foreign_env))["id"]
    prod, test = world.env["prod"], world.env["test"]
    cases = [
        # an upstream of another environment of the org
        ({"environmentId": prod, "upstreamId": world.upstream["test-a"]}, "upstreamId"),
        ({"environmentId": prod, "upstreamId": str(uuid.uuid4())}, "upstreamId"),
        ({"environmentId": prod, "upstreamId": foreign_upstream}, "upstreamId"),
        (
            {"environmentId": str(uuid.uuid4()), "upstreamId": world.upstream["prod-a"]},
            "environmentId",
        ),
        ({"environmentId": foreign_env, "upstreamId": foreign_upstream}, "environmentId"),
    ]
    for item, field in cases:
        for suffix in ("/upstream-bindings", "/upstream-bindings/add"):
            body = {"environmentUpstreams": [world.binding("test", "a"), item]}
            response = await world.patch(suffix, body)
            assert response.status_code == 400, (item, response.text)
            assert response.json()["errors"][0]["pointer"] == f"/environmentUpstreams/1/{field}"
        created = await world.client.post(
            revisions(world.org, world.api["id"]),
            json={"environmentUpstreams": [item]},
            headers=world.admin.headers,
        )
        assert created.status_code == 400
        assert created.json()["errors"][0]["pointer"] == f"/environmentUpstreams/0/{field}"
    # one environment twice in one body
    twice = {"environmentUpstreams": [world.binding("prod", "a"), world.binding("prod", "b")]}
    for suffix in ("/upstream-bindings", "/upstream-bindings/add"):
        response = await world.patch(suffix, twice)
        assert response.status_code == 400
        assert response.json()["errors"][0]["pointer"] == "/environmentUpstreams/1/environmentId"
        assert "more than once" in response.json()["detail"]
    assert await world.bindings() == []
    listed = await world.client.get(
        revisions(world.org, world.api["id"]), headers=world.admin.headers
    )
    assert listed.json()["total"] == 1
    assert test  # both environments took part


async def test_a_live_environment_keeps_its_binding(world: World, database: Database) -> None:
    await world.patch(
        "/upstream-bindings",
        {"environmentUpstreams": [world.binding("prod", "a")]},
    )
    await deploy(database, world.org, world.revision, world.env["prod"])
    number = world.revision["number"]
    conflict = (
        f"revision {number} is deployed to environment 'prod'; its binding there cannot change"
    )
    for suffix, body in (
        ("/upstream-bindings/add", [world.binding("prod", "b")]),
        ("/upstream-bindings", [world.binding("prod", "b")]),
        ("/upstream-bindings", [world.binding("test", "a")]),  # drops prod
        ("/upstream-bindings", []),
    ):
        response = await world.patch(suffix, {"environmentUpstreams": body})
        assert response.status_code == 409, (suffix, body, response.text)
        assert response.json()["detail"] == conflict
    assert await world.bindings() == [world.binding("prod", "a")]

    # an ACTIVE revision can be bound for an environment it is not live in yet
    added = await world.patch(
        "/upstream-bindings/add", {"environmentUpstreams": [world.binding("test", "b")]}
    )
    assert added.status_code == 200, added.text
    assert added.json()["status"] == "ACTIVE"
    assert by_env(added.json()["upstreamBindings"]) == by_env(
        [world.binding("prod", "a"), world.binding("test", "b")]
    )
    # restating the live binding is no change
    replaced = await world.patch(
        "/upstream-bindings",
        {"environmentUpstreams": [world.binding("prod", "a"), world.binding("test", "a")]},
    )
    assert replaced.status_code == 200, replaced.text
    assert by_env(replaced.json()["upstreamBindings"]) == by_env(
        [world.binding("prod", "a"), world.binding("test", "a")]
    )
    # a clone takes the bindings along and, not being live anywhere, may change them all
    clone = (await world.client.post(world.url("/clone"), headers=world.admin.headers)).json()
    assert by_env(clone["upstreamBindings"]) == by_env(replaced.json()["upstreamBindings"])
    cleared = await world.patch("/upstream-bindings", {"environmentUpstreams": []}, clone)
    assert cleared.status_code == 200 and cleared.json()["upstreamBindings"] == []
    assert by_env(await world.bindings()) == by_env(replaced.json()["upstreamBindings"])
