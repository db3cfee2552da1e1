"""Plugin schemas generated from the runtime's models, and global plugins."""

from __future__ import annotations

import uuid

import httpx

from portico.gateway.plugins.registry import PLUGINS
from tests.conftest import Account, Org
from tests.management.conftest import World, route


async def test_schemas_list_every_plugin_and_filter_by_category(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    url = f"/api/orgs/{org.id}/plugin-schemas"
    everything = (await client.get(url + "?size=100", headers=admin.headers)).json()
    assert everything["total"] == len(PLUGINS) == 33
    orders = [p["order"] for p in everything["items"]]
    assert orders == sorted(orders)
    ai = (await client.get(url + "?category=AI", headers=admin.headers)).json()
    assert {p["name"] for p in ai["items"]} == {
        "ai-rate-limiting",
        "ai-prompt-guard",
        "ai-prompt-template",
        "ai-proxy",
    }
    page = (await client.get(url + "?size=5&page=2", headers=admin.headers)).json()
    assert len(page["items"]) == 5 and page["total"] == 33
    assert (await client.get(url + "?category=Nope", headers=admin.headers)).status_code == 400
    assert (await client.get(url + "?colour=1", headers=admin.headers)).status_code == 400


async def test_every_listed_plugin_acts_on_traffic(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    """The seed's 28 plugins, product-quota, the seed product's edge-auth and request-id, and
    xml-to-json and json-to-xml, each with its runtime: the registry refuses
    to load a plugin without one, so none is listed that a deploy would refuse or a gateway
    answer 503 for."""
    url = f"/api/orgs/{org.id}/plugin-schemas"
    listed = (await client.get(url + "?size=100", headers=admin.headers)).json()["items"]
    assert [p["name"] for p in listed] == list(PLUGINS)
    assert len(listed) == 33
    assert all(spec.runtime is not None for spec in PLUGINS.values())
    assert all("runs" not in p for p in listed)


async def test_one_schema_with_its_required_fields(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    url = f"/api/orgs/{org.id}/plugin-schemas"
    proxy = (await client.get(url + "/ai-proxy", headers=admin.headers)).json()
    assert "auth" in proxy["required"]
    assert proxy["category"] == "AI"
    assert proxy["reorderable"] is True
    logger = (await client.get(url + "/aggregator-logger", headers=admin.headers)).json()
    assert logger["required"] == ["endpoint_addrs"]
    key_auth = (await client.get(url + "/key-auth", headers=admin.headers)).json()
    assert key_auth["consumerSchema"]["required"] == ["key"]
    metrics = (await client.get(url + "/metrics-export", headers=admin.headers)).json()
    assert "_meta" not in metrics["schema"]["properties"]  # it cannot be re-ranked
    edge = (await client.get(url + "/edge-auth", headers=admin.headers)).json()
    assert edge["category"] == "Authentication"
    assert edge["required"] == ["mode"]
    assert set(edge["schema"]["properties"]) >= {"signing_secret", "token_ttl", "apikey"}
    assert edge["schema"]["properties"]["token_ttl"]["maximum"] == 86400
    assert sorted(edge["consumerSchema"]["required"]) == ["client_id", "client_secret"]
    request_id = (await client.get(url + "/request-id", headers=admin.headers)).json()
    assert request_id["schema"]["properties"]["algorithm"]["enum"] == ["uuid", "range_id"]
    assert request_id["schema"]["properties"]["header_name"]["default"] == "X-Request-Id"
    missing = await client.get(url + "/Key-Auth", headers=admin.headers)
    assert missing.status_code == 404


async def test_global_plugins_reach_every_route_and_are_replaced_by_narrower_scopes(
    world: World,
) -> None:
    globals_url = f"/envs/{world.env_id}/global-plugins"
    put = await world.call("PUT", globals_url + "/cors", {"allow_origins": "https://a.example.com"})
    assert put.status_code == 200, put.text
    assert put.json()["order"] == 30
    ids = await world.api(
        "web",
        [route("/a"), route("/b", plugins={"cors": {"allow_origins": "https://b.example.com"}})],
    )
    assert (await world.deploy(ids)).status_code == 200
    snapshot = (await world.config()).json()
    by_uri = {r["uri"]: {p["name"]: p for p in r["plugins"]} for r in snapshot["routes"]}
    assert by_uri["/a"]["cors"]["scope"] == "global"
    assert by_uri["/a"]["cors"]["config"]["allow_origins"] == "https://a.example.com"
    assert by_uri["/b"]["cors"]["scope"] == "route"
    assert snapshot["global_plugins"][0]["name"] == "cors"

    bad = await world.call("PUT", globals_url + "/uri-blocker", {"block_rules": ["("]})
    assert bad.status_code == 400
    assert bad.json()["detail"].startswith(
        "failed to check the configuration of plugin uri-blocker"
    )
    assert bad.json()["errors"][0]["pointer"] == "/block_rules/0"
    unknown = await world.call("PUT", globals_url + "/no-such-plugin", {})
    assert unknown.status_code == 404

    one = await world.call("GET", globals_url + "/cors")
    assert one.status_code == 200
    assert one.json() == {
        "name": "cors",
        "category": put.json()["category"],
        "order": 30,
        "config": {"allow_origins": "https://a.example.com"},
    }
    absent = await world.call("GET", globals_url + "/limit-count")
    assert absent.status_code == 404
    assert absent.headers["content-type"] == "application/problem+json"
    assert "limit-count" in absent.json()["detail"]
    assert (await world.call("GET", globals_url + "/no-such-plugin")).status_code == 404
    other_env = f"/envs/{uuid.uuid4()}/global-plugins/cors"
    assert (await world.call("GET", other_env)).status_code == 404

    listed = (await world.call("GET", globals_url)).json()
    assert [p["name"] for p in listed["items"]] == ["cors"]
    version = listed["configVersion"]
    assert (await world.call("DELETE", globals_url + "/cors")).status_code == 204
    after = (await world.config()).json()
    assert after["version"] == version + 1
    assert after["global_plugins"] == []
    assert (await world.call("DELETE", globals_url + "/cors")).status_code == 404


async def test_global_plugins_need_plugin_global(world: World, factory) -> None:  # type: ignore[no-untyped-def]
    publisher = await factory.user(world.org, roles=("API Publisher",))
    response = await world.client.put(
        f"{world.base}/envs/{world.env_id}/global-plugins/cors",
        json={},
        headers=publisher.headers,
    )
    assert response.status_code == 403
    assert response.json()["detail"] == "missing permission 'plugin.global'"
    one = await world.client.get(
        f"{world.base}/envs/{world.env_id}/global-plugins/cors", headers=publisher.headers
    )
    assert one.status_code == 403
    assert one.json()["detail"] == "missing permission 'plugin.global'"
