"""Upstream discovery as a new user runs it: one ``portico serve`` process whose gateway asks
a real DNS server (dnsmasq, ``PORTICO_GATEWAY_RESOLVERS``), upstreams created with
``discovery`` through the management API, APIs deployed on them, and traffic through the
gateway's own listener to backends on the loopback addresses DNS gives. The process, the DNS
server and the environment are the module's, shared by its tests."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.conftest import DatabaseTemplate
from tests.support.dnsserver import DnsServer
from tests.support.portico_process import OWNER, OWNER_PASSWORD, bootstrapped_serve
from tests.support.waiting import eventually_sync

pytestmark = pytest.mark.e2e

GATEWAY_HOST = "discovery.example.com"
#: the loopback addresses the backends answer on (one port for all: an A record has none)
ADDRESSES = ("127.0.0.2", "127.0.0.3", "127.0.0.4")


class _SaysWhere(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = f"{self.server.server_address[0]}".encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@dataclass
class Installation:
    control: httpx.Client
    gateway: httpx.Client
    dns: DnsServer
    org_id: str
    env_id: str
    #: the port every backend listens on
    port: int

    def deploy(self, path: str, service_name: str) -> str:
        """An upstream discovered at ``service_name`` and an API on ``path`` deployed on it,
        through the management API as a user does it: the upstream's id."""
        base = f"/api/orgs/{self.org_id}"
        upstream = self.call(
            "POST",
            f"{base}/envs/{self.env_id}/upstreams",
            {
                "name": path.strip("/"),
                "specification": {"discovery": {"type": "dns", "serviceName": service_name}},
            },
        )
        api = self.call("POST", f"{base}/apis", {"name": path.strip("/")})
        route = {"name": "get", "uri": path, "methods": ["GET"], "plugins": {}}
        revision = self.call(
            "POST",
            f"{base}/apis/{api['id']}/revisions",
            {
                "routeSpec": [route],
                "environmentUpstreams": [
                    {"environmentId": self.env_id, "upstreamId": upstream["id"]}
                ],
            },
        )
        self.call(
            "POST",
            f"{base}/apis/{api['id']}/revisions/{revision['id']}/deploy",
            {"environmentId": self.env_id},
        )
        return str(upstream["id"])

    def call(self, method: str, path: str, body: Any = None) -> Any:
        answer = self.control.request(method, path, json=body)
        assert answer.status_code in (200, 201), answer.text
        return answer.json()

    def served_by(self, path: str, requests: int = 6) -> Counter[str]:
        """Which backend answered each of ``requests`` GETs through the gateway."""
        answers: Counter[str] = Counter()
        for _ in range(requests):
            response = self.gateway.get(path)
            assert response.status_code == 200, response.text
            answers[response.text] += 1
        return answers

    def discovered_nodes(self, upstream_id: str) -> list[dict[str, Any]]:
        """The management API's view: each data-plane node's report of the upstream."""
        path = f"/api/orgs/{self.org_id}/envs/{self.env_id}/upstreams/{upstream_id}"
        items: list[dict[str, Any]] = self.call("GET", f"{path}/discovered-nodes")["items"]
        return items


def _backends() -> list[ThreadingHTTPServer]:
    """A backend on each of ``ADDRESSES``, all on one port (not serving yet)."""
    for _ in range(5):
        servers: list[ThreadingHTTPServer] = []
        try:
            for address in ADDRESSES:
                port = servers[0].server_address[1] if servers else 0
                servers.append(ThreadingHTTPServer((address, port), _SaysWhere))
        except OSError:  # the port is taken on another address: another one
            for server in servers:
                server.server_close()
            continue
        return servers
    raise AssertionError(f"no port free on all of {ADDRESSES}")


@pytest.fixture(scope="module")
def installation(
    db_template: DatabaseTemplate, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Installation]:
    tmp = tmp_path_factory.mktemp("discovery-serve")
    database_url = db_template.new_url(tmp)
    servers = _backends()
    port = int(servers[0].server_address[1])
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    try:
        with (
            DnsServer(tmp / "dns", ttl=1) as dns,
            bootstrapped_serve(
                database_url,
                tmp,
                PORTICO_GATEWAY_RESOLVERS=json.dumps([dns.address]),
                PORTICO_GATEWAY_DISCOVERY_MIN_TTL_SECONDS="0.5",
                PORTICO_GATEWAY_DISCOVERY_MAX_TTL_SECONDS="5",
            ) as (env, _),
            httpx.Client(base_url=f"http://{env['PORTICO_LISTEN']}", timeout=30) as control,
            httpx.Client(
                base_url=f"http://{env['PORTICO_GATEWAY_LISTEN']}",
                headers={"Host": GATEWAY_HOST},
                timeout=30,
            ) as gateway,
        ):
            login = control.post(
                "/api/auth/login", json={"email": OWNER, "password": OWNER_PASSWORD}
            )
            assert login.status_code == 200, login.text
            control.headers["Authorization"] = f"Bearer {login.json()['token']}"
            org_id = control.get("/api/me").json()["orgs"][0]["id"]
            created = control.post(
                f"/api/orgs/{org_id}/envs", json={"name": "prod", "gatewayHosts": [GATEWAY_HOST]}
            )
            assert created.status_code == 201, created.text
            yield Installation(control, gateway, dns, org_id, created.json()["id"], port)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
        db_template.drop(database_url)


def test_traffic_goes_where_dns_says_follows_a_change_and_the_api_shows_it(
    installation: Installation,
) -> None:
    dns, port = installation.dns, installation.port
    dns.publish("orders.e2e.test", ["127.0.0.2", "127.0.0.3"])
    upstream = installation.deploy("/orders", f"orders.e2e.test:{port}")

    # deployed: the embedded gateway takes the snapshot and resolves the name first
    eventually_sync(
        lambda: installation.gateway.get("/orders").status_code == 200,
        timeout=30,
        what="the API serves through the gateway",
    )
    assert set(installation.served_by("/orders")) == {"127.0.0.2", "127.0.0.3"}
    eventually_sync(
        lambda: installation.discovered_nodes(upstream),
        what="the node's first report of the upstream",
    )
    [node] = installation.discovered_nodes(upstream)
    assert node["nodes"] == [
        {"host": "127.0.0.2", "port": port, "weight": 1, "priority": 0},
        {"host": "127.0.0.3", "port": port, "weight": 1, "priority": 0},
    ]
    assert (node["error"], node["failures"]) == (None, 0)

    # the records change: within their TTL the traffic follows, and the node reports it
    dns.publish("orders.e2e.test", ["127.0.0.4"])
    eventually_sync(
        lambda: installation.served_by("/orders", 2) == {"127.0.0.4": 2},
        what="the traffic follows the new record",
    )
    eventually_sync(
        lambda: (
            [n["host"] for n in installation.discovered_nodes(upstream)[0]["nodes"]]
            == ["127.0.0.4"]
        ),
        what="the management API shows the new node",
    )


def test_the_last_good_nodes_keep_serving_while_the_dns_server_is_down(
    installation: Installation,
) -> None:
    dns, port = installation.dns, installation.port
    dns.publish("stock.e2e.test", ["127.0.0.3"])
    upstream = installation.deploy("/stock", f"stock.e2e.test:{port}")
    eventually_sync(
        lambda: installation.gateway.get("/stock").status_code == 200,
        timeout=30,
        what="the API serves through the gateway",
    )

    dns.stop()
    try:
        eventually_sync(
            lambda: installation.discovered_nodes(upstream)[0]["error"] is not None,
            what="the node reports the resolver's failure",
        )
        assert installation.served_by("/stock") == {"127.0.0.3": 6}
        [node] = installation.discovered_nodes(upstream)
        assert node["nodes"] == [{"host": "127.0.0.3", "port": port, "weight": 1, "priority": 0}]
        assert node["error"].startswith("A stock.e2e.test:"), node["error"]
    finally:
        dns.start()  # the same port: the gateway asks it again

    eventually_sync(
        lambda: installation.discovered_nodes(upstream)[0]["error"] is None,
        timeout=20,
        what="the node reports answers again",
    )
