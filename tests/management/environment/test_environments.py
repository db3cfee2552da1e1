"""Environments over HTTP: success, every kind of bad input, permissions, tenancy, audit."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.conftest import Account, Factory, Org


def url(org: Org, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/envs{suffix}"


async def create(
    client: httpx.AsyncClient, org: Org, who: Account, **body: object
) -> httpx.Response:
    return await client.post(url(org), json=body, headers=who.headers)


async def test_create_read_list_update_delete(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    created = await create(client, org, admin, name="prod", gatewayHosts=["API.Example.com."])
    assert created.status_code == 201, created.text
    env = created.json()
    assert env["name"] == "prod"
    assert env["gatewayHosts"] == ["api.example.com"]
    assert env["orgId"] == str(org.id)

    got = (await client.get(url(org, f"/{env['id']}"), headers=admin.headers)).json()
    assert {k: got[k] for k in env} == env
    # the detail also says what is deployed there and which config version gateways run
    assert got["deployments"] == []
    assert got["configVersion"] == 1

    listed = (await client.get(url(org), headers=admin.headers)).json()
    assert listed["total"] == 1 and listed["items"][0]["id"] == env["id"]
    assert listed["page"] == 1 and listed["size"] == 20

    patched = await client.patch(
        url(org, f"/{env['id']}"),
        json={"description": "live traffic", "gatewayHosts": ["*.prod.example.com"]},
        headers=admin.headers,
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["gatewayHosts"] == ["*.prod.example.com"]
    assert patched.json()["description"] == "live traffic"

    deleted = await client.delete(url(org, f"/{env['id']}"), headers=admin.headers)
    assert deleted.status_code == 204
    missing = await client.get(url(org, f"/{env['id']}"), headers=admin.headers)
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"


async def test_every_change_is_audited(client: httpx.AsyncClient, org: Org, admin: Account) -> None:
    env = (await create(client, org, admin, name="qa")).json()
    await client.patch(url(org, f"/{env['id']}"), json={"name": "qa2"}, headers=admin.headers)
    await client.delete(url(org, f"/{env['id']}"), headers=admin.headers)
    log = (await client.get(f"/api/orgs/{org.id}/audit-log", headers=admin.headers)).json()
    actions = [e["action"] for e in log["items"] if e["entityId"] == env["id"]]
    assert actions == ["environment.delete", "environment.update", "environment.create"]
    update = next(e for e in log["items"] if e["action"] == "environment.update")
    assert update["before"]["name"] == "qa" and update["after"]["name"] == "qa2"
    assert update["actor"]["email"] == admin.email


@pytest.mark.parametrize(
    ("body", "pointer", "detail"),
    [
        ({}, "/name", "required property 'name' not found"),
        ({"name": 5}, "/name", "$.name: string expected"),
        ({"name": ""}, "/name", "$.name: must be at least 1 characters long"),
        ({"name": "x" * 101}, "/name", "$.name: must be at most 100 characters long"),
        # a pattern many names share is said in words, not as a regular expression
        ({"name": " prod"}, "/name", "$.name: must not start or end with a space"),
        ({"name": "a", "colour": "red"}, "/colour", "property 'colour' is not allowed"),
        (
            {"name": "a", "gatewayHosts": "h.example.com"},
            "/gatewayHosts",
            "$.gatewayHosts: array expected",
        ),
        ({"name": "a", "gatewayHosts": ["bad host"]}, "/gatewayHosts/0", None),
        ({"name": "a", "gatewayHosts": ["a.example.com", "A.example.com"]}, "/gatewayHosts", None),
        (
            {"name": "a", "gateway_hosts": []},
            "/gateway_hosts",
            "property 'gateway_hosts' is not allowed",
        ),
    ],
)
async def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    body: dict[str, object],
    pointer: str,
    detail: str | None,
) -> None:
    response = await client.post(url(org), json=body, headers=admin.headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == 400
    assert pointer in [e["pointer"] for e in problem["errors"]]
    if detail is not None:
        assert problem["detail"] == detail
    listed = (await client.get(url(org), headers=admin.headers)).json()
    assert listed["total"] == 0


async def test_malformed_json_and_wrong_content_type(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    malformed = await client.post(
        url(org),
        content=b'{"name": ',
        headers={**admin.headers, "content-type": "application/json"},
    )
    assert malformed.status_code == 400
    assert malformed.json()["detail"].startswith("malformed JSON")
    wrong_type = await client.post(
        url(org), content=b"name=prod", headers={**admin.headers, "content-type": "text/plain"}
    )
    assert wrong_type.status_code == 415
    assert wrong_type.json()["type"] == "/problems/unsupported-media-type"
    not_object = await client.post(url(org), json=["prod"], headers=admin.headers)
    assert not_object.status_code == 400


async def test_oversized_body_is_413(client: httpx.AsyncClient, org: Org, admin: Account) -> None:
    response = await client.post(
        url(org), json={"name": "a", "description": "x" * 9_000_000}, headers=admin.headers
    )
    assert response.status_code == 413


async def test_names_and_hosts_are_unique(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    assert (
        await create(client, org, admin, name="prod", gatewayHosts=["a.example.com"])
    ).status_code == 201
    again = await create(client, org, admin, name="prod")
    assert again.status_code == 409
    assert "prod" in again.json()["detail"]
    # each conflict names its field, for a form to show it there
    assert [e["pointer"] for e in again.json()["errors"]] == ["/name"]
    # a gateway host belongs to one environment across the whole platform
    other_org = await factory.org()
    other_admin = await factory.user(other_org, roles=("Administrator",))
    hosts = ["b.example.com", "a.example.com"]
    stolen = await create(client, other_org, other_admin, name="x", gatewayHosts=hosts)
    assert stolen.status_code == 409
    assert "a.example.com" in stolen.json()["detail"]
    assert stolen.json()["errors"] == [
        {"pointer": "/gatewayHosts/1", "detail": "a.example.com already serves another environment"}
    ]


async def test_listing_sorts_filters_and_rejects_unknown_parameters(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    for name in ("b", "c", "a"):
        await create(client, org, admin, name=name)
    names = lambda r: [e["name"] for e in r.json()["items"]]  # noqa: E731
    assert names(await client.get(url(org), headers=admin.headers)) == ["a", "b", "c"]
    assert names(await client.get(url(org) + "?sort=-name", headers=admin.headers)) == [
        "c",
        "b",
        "a",
    ]
    assert names(await client.get(url(org) + "?name=b", headers=admin.headers)) == ["b"]
    paged = (await client.get(url(org) + "?size=2&page=2", headers=admin.headers)).json()
    assert [e["name"] for e in paged["items"]] == ["c"] and paged["total"] == 3
    for bad in ("?colour=red", "?sort=colour", "?size=0", "?size=1000", "?page=x", "?name=%00"):
        response = await client.get(url(org) + bad, headers=admin.headers)
        assert response.status_code == 400, bad
        assert response.json()["errors"][0]["parameter"] in {
            "colour",
            "sort",
            "size",
            "page",
            "name",
        }


async def test_permissions_and_tenancy(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account, viewer: Account
) -> None:
    env = (await create(client, org, admin, name="prod")).json()
    assert (await client.get(url(org), headers=viewer.headers)).status_code == 200
    denied = await create(client, org, viewer, name="nope")
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'environment.manage'"

    other_org = await factory.org()
    outsider = await factory.user(other_org, roles=("Administrator",))
    # another org's environment id, through the outsider's own org: not found
    swapped = await client.get(
        f"/api/orgs/{other_org.id}/envs/{env['id']}", headers=outsider.headers
    )
    assert swapped.status_code == 404
    # the outsider cannot reach our org at all
    foreign = await client.get(url(org), headers=outsider.headers)
    assert foreign.status_code == 404
    assert (
        await client.get(url(org, f"/{uuid.uuid4()}"), headers=admin.headers)
    ).status_code == 404
    assert (await client.get(url(org, "/not-a-uuid"), headers=admin.headers)).status_code == 404
    assert (await client.get(url(org))).status_code == 401
