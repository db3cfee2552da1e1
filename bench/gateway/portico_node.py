"""A Portico gateway process for the wrk benchmark: one environment, ``--routes`` prefix
routes to one upstream, optionally key-auth + limit-count (``--plugins limit``) or key-auth +
product-quota (``--plugins quota``: the consumer is an app whose product covers every API)
on every route, and any plugins given as JSON by ``--attach`` (bench_plugins.py). With
``--discovery NAME`` the upstream has ``discovery: {type: dns, serviceName:
"NAME:<upstream port>"}`` instead of its node, resolved through ``--resolver`` (the per-request
cost of a discovered upstream against a static one, measured with callgrind: README,
Performance). Serves on ``--port`` with uvloop until killed. Not a benchmark by itself
(bench_gateway.py drives it).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
from typing import Any

from portico.gateway.gateway import Gateway
from portico.gateway.http.server import serve
from portico.gateway.node_options import GatewayOptions
from portico.gateway.snapshot import content_hash
from portico.gateway.status import status_handler
from portico.gateway.telemetry.rollups import Batch, TelemetryRecorder
from portico.runner import settle_heap, use_uvloop

HOST = "bench.example.com"
KEY = "bench-key-0123456789"
LDAP_DN = "cn=bench,ou=users,dc=example,dc=org"
#: the bench app's edge-auth client (bench/plugins/edge_auth.py)
CLIENT_ID = "bench-client-0123456789"
CLIENT_SECRET = "bench-client-secret-" + "0123456789" * 3


def snapshot(
    routes: int,
    upstream_port: int,
    plugins: str,
    attach: list[dict[str, Any]] | None = None,
    discovery: str = "",
) -> dict[str, Any]:
    attached: list[dict[str, Any]] = list(attach or [])
    if plugins == "limit":
        attached = [
            {"name": "key-auth", "scope": "service", "order": 100, "config": {}},
            {
                "name": "limit-count",
                "scope": "route",
                "order": 210,
                "config": {"count": 1_000_000_000, "time_window": 60},
            },
        ]
    elif plugins == "quota":
        attached = [
            {"name": "key-auth", "scope": "service", "order": 100, "config": {}},
            {"name": "product-quota", "scope": "route", "order": 230, "config": {}},
        ]
    document: dict[str, Any] = {
        "version": 1,
        "generated_at": "2026-01-01T00:00:00+00:00",
        "org_id": "org",
        "environment_id": "env",
        "environment_name": "bench",
        "gateway_hosts": [HOST],
        "routes": [
            {
                "id": f"rev:{i}",
                "api_id": f"api{i // 100}",
                "api_name": f"api{i // 100}",
                "revision_id": "rev",
                "revision_number": 1,
                "name": f"r{i}",
                "uri": f"/r{i}/*",
                "methods": ["GET", "POST"],  # (POST: the AI plugins take chat bodies)
                "hosts": [],
                "priority": 0,
                "status": 1,
                "upstream_id": "up",
                "plugins": attached,
            }
            for i in range(routes)
        ],
        "upstreams": {
            "up": {
                "id": "up",
                "name": "nginx",
                "specification": {
                    "discovery": {"type": "dns", "serviceName": f"{discovery}:{upstream_port}"}
                }
                if discovery
                else {"nodes": [{"host": "127.0.0.1", "port": upstream_port}]},
            }
        },
        "consumers": [
            {
                "id": "c1",
                "username": "bench",
                "credentials": {
                    "key-auth": {"key_hash": hashlib.sha256(KEY.encode()).hexdigest()},
                    # bench/plugins/ldap_policy.py binds as this DN
                    "ldap-auth": {"user_dn": LDAP_DN},
                    "edge-auth": {
                        "client_id": CLIENT_ID,
                        "client_secret_hash": hashlib.sha256(CLIENT_SECRET.encode()).hexdigest(),
                    },
                },
                "plugins": [],
                "app": {
                    "id": "a1",
                    "name": "bench-app",
                    "developer_id": "d1",
                    "developer_email": "bench@example.com",
                    "product_ids": ["p1"],
                },
            }
        ],
        "global_plugins": [],
        "products": [
            {
                "id": "p1",
                "name": "bench-product",
                "api_ids": sorted({f"api{i // 100}" for i in range(routes)}),
                "quota": {
                    "limit": 1_000_000_000,
                    "interval": 1,
                    "interval_unit": "minute",
                    "key_scope": "app",
                },
            }
        ],
    }
    document["content_hash"] = content_hash(document)
    return document


async def _take(batch: Batch) -> None:
    """The control plane's side of telemetry, which is not what is measured here."""


async def main(
    port: int,
    routes: int,
    upstream_port: int,
    plugins: str,
    attach: list[dict[str, Any]],
    egress_allow: tuple[str, ...],
    status_port: int | None = None,
    discovery: str = "",
    resolvers: tuple[str, ...] = (),
) -> None:
    gateway = Gateway(options=GatewayOptions(egress_allow=egress_allow, resolvers=resolvers))
    # every request folded into the telemetry rollups, as a deployed node does
    telemetry = TelemetryRecorder(_take)
    gateway.observers.append(telemetry.observe)
    telemetry.start()
    await gateway.apply(snapshot(routes, upstream_port, plugins, attach, discovery))
    server = await serve(gateway.handle, "127.0.0.1", port)
    if status_port is not None:  # /metrics: bench_plugins.py reads the loggers' drops there
        await serve(status_handler(gateway), "127.0.0.1", status_port)
    settle_heap()  # as `portico gateway` does once it is up
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--routes", type=int, default=10)
    parser.add_argument("--upstream-port", type=int, required=True)
    parser.add_argument("--plugins", choices=("", "limit", "quota"), default="")
    parser.add_argument(
        "--attach",
        default="[]",
        help='JSON list of plugins attached to every route, each {"name", "scope", "order", '
        '"config"} (bench_plugins.py\'s cases), before those of --plugins',
    )
    parser.add_argument(
        "--egress-allow",
        action="append",
        default=[],
        help="CIDR the plugins may call (their servers run on loopback here); repeatable",
    )
    parser.add_argument("--status-port", type=int, help="serve /metrics and /status there")
    parser.add_argument("--discovery", default="", help="a DNS name: the upstream is discovered")
    parser.add_argument("--resolver", action="append", default=[], help="DNS server, host:port")
    args = parser.parse_args()
    use_uvloop()
    attach = json.loads(args.attach)
    allowed = tuple(args.egress_allow)
    asyncio.run(
        main(
            args.port,
            args.routes,
            args.upstream_port,
            args.plugins,
            attach,
            allowed,
            args.status_port,
            args.discovery,
            tuple(args.resolver),
        )
    )
