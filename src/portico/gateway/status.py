"""The gateway's status listener (``PORTICO_METRICS_LISTEN``): ``/ready`` is 503 until a first
configuration is loaded, ``/status`` lists the environments with their config versions, the
health of every upstream node and what discovery found for each discovered upstream,
``/metrics`` the gateway's Prometheus registry (text format 0.0.4)."""

from __future__ import annotations

import json

from portico.gateway.gateway import Gateway
from portico.gateway.http.server import Handler, Request, Responder
from portico.gateway.telemetry.metrics import CONTENT_TYPE

JSON = [("content-type", "application/json")]


def status_handler(gateway: Gateway) -> Handler:
    async def handle(request: Request, responder: Responder) -> None:
        if request.path == "/ready":
            ready = gateway.ready
            body = {"ready": ready, "versions": gateway.versions()}
            responder.send(200 if ready else 503, JSON, json.dumps(body).encode())
        elif request.path == "/status":
            body = {
                "environments": {
                    env_id: {
                        "name": runtime.snapshot.environment_name,
                        "version": runtime.version,
                        "routes": len(runtime.routes),
                        "hosts": runtime.snapshot.gateway_hosts,
                    }
                    for env_id, runtime in gateway.environments.items()
                },
                "upstreams": {
                    upstream_id: checker.snapshot()
                    for upstream_id, checker in gateway.health.live().items()
                },
                "discovery": {
                    upstream_id: upstream.describe()
                    for upstream_id, upstream in gateway.discovery.live().items()
                },
            }
            responder.send(200, JSON, json.dumps(body, default=str).encode())
        elif request.path == "/metrics":
            metrics = gateway.metrics.exposition()
            responder.send(200, [("content-type", CONTENT_TYPE)], metrics)
        else:
            responder.send(404, JSON, b'{"error_msg":"404 Not Found"}')

    return handle
