"""An upstream with DNS discovery as the management API shows it: each data-plane node's
resolved nodes, from its heartbeat, whether the node is ``portico serve``'s embedded gateway
(its feeder) or a standalone one (``ControlPlaneSync``), against a real DNS server; and the
refusals of a discovery that cannot be resolved."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.embedded import SnapshotFeeder
from portico.gateway.gateway import Gateway
from portico.gateway.node_options import GatewayOptions
from portico.gateway.sync import ControlPlaneSync, SnapshotStore
from tests.conftest import Account, Org
from tests.support.dnsserver import DnsServer
from tests.support.waiting import eventually

ROUTE = {"name": "list", "uri": "/orders", "methods": ["GET"], "plugins": {}}


@pytest.fixture(scope="module")
def dns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DnsServer]:
    with DnsServer(tmp_path_factory.mktemp("dns"), ttl=1) as server:
        yield server


async def call(
    client: httpx.AsyncClient, admin: Account, method: str, path: str, body: Any = None
) -> Any:
    answer = await client.request(method, path, json=body, headers=admin.headers)
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


async def deployed(
    client: httpx.AsyncClient, org: Org, admin: Account, service_name: str
) -> tuple[str, str]:
    """An environment with an upstream discovered at ``service_name`` and an API deployed on
    it: (environment id, upstream id)."""
    base = f"/api/orgs/{org.id}"
    env = await call(client, admin, "POST", f"{base}/envs", {"name": "prod"})
    specification = {"discovery": {"type": "dns", "serviceName": service_name}}
    upstream = await call(
        client,
        admin,
        "POST",
        f"{base}/envs/{env['id']}/upstreams",
        {"name": "orders", "specification": specification},
    )
    api = await call(client, admin, "POST", f"{base}/apis", {"name": "orders"})
    revision = await call(
        client,
        admin,
        "POST",
        f"{base}/apis/{api['id']}/revisions",
        {
            "routeSpec": [ROUTE],
            "environmentUpstreams": [{"environmentId": env["id"], "upstreamId": upstream["id"]}],
        },
    )
    deploy = f"{base}/apis/{api['id']}/revisions/{revision['id']}/deploy"
    await call(client, admin, "POST", deploy, {"environmentId": env["id"]})
    return env["id"], upstream["id"]


def view(org: Org, env: str, upstream: str) -> str:
    return f"/api/orgs/{org.id}/envs/{env}/upstreams/{upstream}/discovered-nodes"


async def test_the_embedded_gateway_reports_what_dns_gave_and_each_change(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    database: Database,
    clock: Clock,
    dns: DnsServer,
) -> None:
    dns.publish("embedded.test", ["127.0.0.2", "127.0.0.3"])
    env, upstream = await deployed(client, org, admin, "embedded.test:8080")
    gateway = Gateway(options=GatewayOptions(resolvers=(dns.address,), discovery_max_ttl=5))
    feeder = SnapshotFeeder(gateway, database, clock=clock, heartbeat_seconds=0)
    try:
        await feeder.sync_once()  # the snapshot goes into service with DNS's answer
        await feeder.report()
        shown = await call(client, admin, "GET", view(org, env, upstream))
        assert shown["upstreamId"] == upstream
        assert shown["discovery"] == {"type": "dns", "serviceName": "embedded.test:8080"}
        [node] = shown["items"]
        assert node["nodeId"] == gateway.options.node_id
        assert (node["error"], node["failures"]) == (None, 0)
        assert node["resolvedAt"] is not None
        assert node["nodes"] == [
            {"host": "127.0.0.2", "port": 8080, "weight": 1, "priority": 0},
            {"host": "127.0.0.3", "port": 8080, "weight": 1, "priority": 0},
        ]

        dns.publish("embedded.test", ["127.0.0.4"])
        watcher = gateway.discovery.live()[upstream]
        await eventually(lambda: len(watcher.nodes) == 1, what="the change resolved")
        await feeder.report()
        [node] = (await call(client, admin, "GET", view(org, env, upstream)))["items"]
        assert [n["host"] for n in node["nodes"]] == ["127.0.0.4"]
    finally:
        await gateway.close()


async def test_a_standalone_node_reports_its_discovery_in_its_heartbeat(
    client: httpx.AsyncClient,
    app: Any,
    org: Org,
    admin: Account,
    dns: DnsServer,
    tmp_path: Path,
) -> None:
    dns.publish("standalone.test", ["127.0.0.5"])
    env, upstream = await deployed(client, org, admin, "standalone.test:9090")
    token = await call(
        client, admin, "POST", f"/api/orgs/{org.id}/envs/{env}/dataplane-tokens", {"name": "n1"}
    )
    gateway = Gateway(options=GatewayOptions(resolvers=(dns.address,)))
    sync = ControlPlaneSync(
        gateway,
        control_plane="http://testserver",
        env_id=env,
        token=token["token"],
        store=SnapshotStore(tmp_path, env),
        node_id="edge-1",
        transport=httpx.ASGITransport(app=app, client=("127.0.0.1", 50001)),
    )
    try:
        await sync.poll_once()
        await sync.heartbeat()
        reported = sync.heartbeat_state()
        dns.publish("standalone.test", [])  # NXDOMAIN: the last good node stays, with an error
        watcher = gateway.discovery.live()[upstream]
        await eventually(lambda: watcher.error is not None, what="the empty answer recorded")
        # heartbeat_forever sends a heartbeat as soon as its state changes (the nodes did not)
        assert sync.heartbeat_state() != reported
    finally:
        await sync.close()
        await gateway.close()
    [node] = (await call(client, admin, "GET", view(org, env, upstream)))["items"]
    assert node["nodeId"] == "edge-1"
    assert node["nodes"] == [{"host": "127.0.0.5", "port": 9090, "weight": 1, "priority": 0}]

    # a heartbeat's report is checked: a bad one is refused naming the field, nothing kept
    beat = {
        "nodeId": "edge-1",
        "environmentId": env,
        "configVersion": 1,
        "discovery": {
            upstream: {"type": "dns", "serviceName": "x.test:1", "nodes": [{"host": "a"}]}
        },
    }
    refused = await client.post(
        "/api/dataplane/v1/heartbeat",
        json=beat,
        headers={"Authorization": f"Bearer {token['token']}"},
    )
    assert refused.status_code == 400, refused.text
    pointers = {e["pointer"] for e in refused.json()["errors"]}
    assert pointers == {
        f"/discovery/{upstream}/nodes/0/port",
        f"/discovery/{upstream}/nodes/0/weight",
        f"/discovery/{upstream}/nodes/0/priority",
    }
    [node] = (await call(client, admin, "GET", view(org, env, upstream)))["items"]
    assert [n["host"] for n in node["nodes"]] == ["127.0.0.5"]


async def test_an_upstream_with_listed_nodes_has_no_discovered_nodes(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    base = f"/api/orgs/{org.id}"
    env = await call(client, admin, "POST", f"{base}/envs", {"name": "prod"})
    upstream = await call(
        client,
        admin,
        "POST",
        f"{base}/envs/{env['id']}/upstreams",
        {"name": "static", "specification": {"nodes": [{"host": "127.0.0.1", "port": 80}]}},
    )
    shown = await call(client, admin, "GET", view(org, env["id"], upstream["id"]))
    assert shown == {"upstreamId": upstream["id"], "discovery": None, "items": []}
    missing = await client.get(
        view(org, env["id"], "00000000-0000-0000-0000-000000000000"), headers=admin.headers
    )
    assert (missing.status_code, missing.json()["detail"]) == (404, "upstream not found")


@pytest.mark.store_agnostic
@pytest.mark.parametrize(
    ("discovery", "pointer", "detail"),
    [
        (
            {"type": "consul", "serviceName": "orders.test:80"},
            "/specification/discovery/type",
            "$.specification.discovery.type: must be one of 'dns'",
        ),
        (
            {"type": "dns", "serviceName": "orders.test"},
            "/specification/discovery/serviceName",
            "$.specification.discovery.serviceName: an A/AAAA name needs the port of its nodes",
        ),
        (
            {"type": "dns", "serviceName": "_http._tcp.orders.test:80"},
            "/specification/discovery/serviceName",
            "$.specification.discovery.serviceName: an SRV name takes its ports from its records",
        ),
    ],
    ids=["unknown-type", "name-without-port", "srv-name-with-port"],
)
async def test_a_discovery_no_source_can_resolve_is_refused_naming_the_field(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    discovery: dict[str, str],
    pointer: str,
    detail: str,
) -> None:
    env = await call(client, admin, "POST", f"/api/orgs/{org.id}/envs", {"name": "prod"})
    upstreams = f"/api/orgs/{org.id}/envs/{env['id']}/upstreams"
    refused = await client.post(
        upstreams,
        json={"name": "orders", "specification": {"discovery": discovery}},
        headers=admin.headers,
    )
    assert refused.status_code == 400
    assert refused.headers["content-type"] == "application/problem+json"
    [error] = refused.json()["errors"]
    assert error["pointer"] == pointer
    assert error["detail"].startswith(detail)
    assert (await call(client, admin, "GET", upstreams))["items"] == []  # nothing stored
