"""How the management service answers what the router and the request parsing refuse:
found by schemathesis (``test_openapi.py``), checked here on their own."""

from __future__ import annotations

import uuid

import httpx

from tests.conftest import Account, Org


async def test_a_body_not_sent_as_json_is_a_415_whatever_the_route_reads(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    """A model body and a plain-object body (a global plugin's config) answer alike: the
    latter was a 400 "object expected", which the document did not say."""
    env = await client.post(f"/api/orgs/{org.id}/envs", json={"name": "e"}, headers=admin.headers)
    assert env.status_code == 201, env.text
    for method, path in (
        ("POST", f"/api/orgs/{org.id}/envs"),
        ("PUT", f"/api/orgs/{org.id}/envs/{env.json()['id']}/global-plugins/cors"),
    ):
        sent = await client.request(
            method,
            path,
            content=b'{"name": "x"}',
            headers={**admin.headers, "Content-Type": "text/plain"},
        )
        assert sent.status_code == 415, (path, sent.text)
        assert sent.headers["content-type"] == "application/problem+json"
        # JSON under another name (+json) is read as JSON
        merge = await client.request(
            method,
            path,
            content=b"[]",
            headers={**admin.headers, "Content-Type": "application/merge-patch+json"},
        )
        assert merge.status_code == 400, (path, merge.text)


async def test_allow_lists_the_methods_of_the_literal_path_not_of_the_parameter(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    """``/apis/from-spec`` is not an ``/apis/{apiId}``: a method it lacks is a 405 whose
    Allow names only its own methods (it named GET, PATCH and DELETE of ``{apiId}`` too)."""
    for path in ("from-spec", "import-openapi"):
        answer = await client.put(f"/api/orgs/{org.id}/apis/{path}", headers=admin.headers)
        assert answer.status_code == 405, answer.text
        assert answer.headers["allow"] == "POST"
    # a path with only parameters still lists every method of its routes
    some = await client.put(f"/api/orgs/{org.id}/apis/{uuid.uuid4()}", headers=admin.headers)
    assert some.status_code == 405
    assert some.headers["allow"] == "DELETE, GET, PATCH"
