"""The remote side of subscriptions, for the tests and ``bench/bench_subscriptions.py``: a
real Portico management service (uvicorn on loopback, in the caller's event loop, its own
store) that can be stopped and started again on the same port, and a real gateway fed by
that store (the embedded gateway's feeder), serving one API behind ``key-auth`` and
``product-quota`` to a real echo backend. While the management service is stopped, the
gateway keeps serving its last configuration, as a deployed gateway does.

The management side is seeded through its HTTP API, as an operator would: an environment
with the gateway host, an upstream, an API with one route deployed there, a product selling
it deployed there, and a service account for the marketplace with the predefined Integration
role alone (it may make and deploy an API's implied product).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import uuid
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from pydantic import SecretStr

from portico.app import create_app
from portico.bootstrap import bootstrap
from portico.core.account import User
from portico.core.clock import Clock, utcnow
from portico.core.db.engine import Database
from portico.core.settings import Settings
from portico.embedded import SnapshotFeeder, database_sink
from portico.gateway.gateway import Gateway
from portico.gateway.http.server import serve as serve_http
from portico.gateway.telemetry.rollups import TelemetryRecorder
from portico.marketplace.developer_app import keys
from portico.marketplace.developer_app import service as app_service
from portico.marketplace.developer_app.schemas import DeveloperAppCreate
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    SourceType,
    Visibility,
)
from portico.marketplace.subscription import service as subscription_service
from tests.e2e.test_gateway import Echo
from tests.support.waiting import eventually

HOST = "api.subs.example.com"
OWNER = "owner@remote.example.com"
OWNER_PASSWORD = "owner-password-123"
SECRET = "remote-secret-key-0123456789abcdef0123456789"


def remote_settings(database_url: str, data_dir: Path) -> Settings:
    return Settings(
        environment="test",
        data_dir=data_dir,
        database_url=database_url,
        secret_key=SecretStr(SECRET),
        log_json=False,
        log_format="text",
        log_level="WARNING",
        bootstrap_admin_email=OWNER,
        bootstrap_admin_password=SecretStr(OWNER_PASSWORD),
        _env_file=None,  # type: ignore[call-arg]
    )


class ManagementServer:
    """The management service on one loopback port, stoppable and startable again there."""

    def __init__(self, config: Settings) -> None:
        self.config = config
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        listener = socket.create_server(("127.0.0.1", self.port))  # SO_REUSEADDR on POSIX
        self.port = listener.getsockname()[1]
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(self.config),
                log_config=None,
                access_log=False,
                lifespan="on",
                timeout_graceful_shutdown=1,
            )
        )
        # the test runner keeps its own signal handlers (uvicorn takes them in the main thread)
        server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
        self._server, self._socket = server, listener
        self._task = asyncio.create_task(server.serve(sockets=[listener]))
        await eventually(lambda: server.started, 90, what="the management service to start")

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.should_exit = True
        assert self._task is not None and self._socket is not None
        await self._task
        self._socket.close()
        self._server = self._task = self._socket = None


@dataclass
class RemoteSide:
    management: ManagementServer
    database: Database
    gateway: Gateway
    gateway_url: str
    org_id: str = ""
    env_id: str = ""
    api_id: str = ""
    product_id: str = ""
    token: str = ""
    #: the management API's owner, signed in
    headers: dict[str, str] = field(default_factory=dict)
    _closers: list[Any] = field(default_factory=list)

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        async with httpx.AsyncClient(
            base_url=self.management.base_url, headers=self.headers, timeout=30
        ) as http:
            answer = await http.request(method, f"/api/orgs/{self.org_id}{path}", **kwargs)
        assert answer.status_code < 300, answer.text
        return answer.json() if answer.content else None

    async def through_gateway(self, key: str | None, path: str = "/orders") -> int:
        headers = {"Host": HOST, **({"apikey": key} if key is not None else {})}
        async with httpx.AsyncClient(base_url=self.gateway_url, timeout=10) as http:
            return (await http.get(path, headers=headers)).status_code

    def connection_body(self, name: str = "remote gateway") -> dict[str, Any]:
        return {
            "name": name,
            "source": "portico",
            "config": {
                "base_url": self.management.base_url,
                "org_id": self.org_id,
                "token": self.token,
            },
        }

    async def close(self) -> None:
        for closer in reversed(self._closers):
            await closer()
        await self.management.stop()
        await self.gateway.close()
        await self.database.dispose()


@contextlib.asynccontextmanager
async def remote_side(database_url: str, data_dir: Path):  # type: ignore[no-untyped-def]
    """A seeded remote side; everything stopped when the block ends."""
    backend = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=backend.serve_forever, daemon=True)
    thread.start()
    config = remote_settings(database_url, data_dir)
    database = Database(config.resolved_database_url)
    await bootstrap(config, database)
    management = ManagementServer(config)
    await management.start()
    gateway = Gateway()
    # the gateway's traffic reaches the management analytics, as the embedded gateway's does
    telemetry = TelemetryRecorder(
        database_sink(database, Clock(), "subscriptions-test-node"), interval=0.2
    )
    gateway.observers.append(telemetry.observe)
    telemetry.start()
    listener = await serve_http(gateway.handle, "127.0.0.1", 0)
    feeder = asyncio.create_task(SnapshotFeeder(gateway, database).run())
    side = RemoteSide(
        management,
        database,
        gateway,
        f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}",
    )

    async def stop_serving() -> None:
        feeder.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await feeder
        listener.close()
        await telemetry.stop()

    side._closers.append(stop_serving)
    try:
        await _seed(side, backend.server_address[1])
        yield side
    finally:
        await side.close()
        backend.shutdown()
        backend.server_close()


async def _seed(side: RemoteSide, backend_port: int) -> None:
    async with httpx.AsyncClient(base_url=side.management.base_url, timeout=30) as http:
        signed_in = await http.post(
            "/api/auth/login", json={"email": OWNER, "password": OWNER_PASSWORD}
        )
        assert signed_in.status_code == 200, signed_in.text
        side.headers = {"Authorization": f"Bearer {signed_in.json()['token']}"}
        me = await http.get("/api/me", headers=side.headers)
        side.org_id = me.json()["orgs"][0]["id"]
    env = await side.call("POST", "/envs", json={"name": "shop", "gatewayHosts": [HOST]})
    side.env_id = env["id"]
    upstream = await side.call(
        "POST",
        f"/envs/{env['id']}/upstreams",
        json={
            "name": "echo",
            "specification": {"nodes": [{"host": "127.0.0.1", "port": backend_port}]},
        },
    )
    api = await side.call("POST", "/apis", json={"name": "orders"})
    side.api_id = api["id"]
    revision = await side.call(
        "POST",
        f"/apis/{api['id']}/revisions",
        json={
            "serviceSpec": {"plugins": {"key-auth": {}, "product-quota": {}}},
            "routeSpec": [{"name": "list", "uri": "/orders", "methods": ["GET"], "plugins": {}}],
            "environmentUpstreams": [{"environmentId": env["id"], "upstreamId": upstream["id"]}],
        },
    )
    await side.call(
        "POST",
        f"/apis/{api['id']}/revisions/{revision['id']}/deploy",
        json={"environmentId": env["id"]},
    )
    product = await side.call(
        "POST",
        "/products",
        json={
            "name": "shop",
            "apiIds": [api["id"]],
            "quota": {"limit": 1000, "interval": 1, "interval_unit": "day"},
        },
    )
    side.product_id = product["id"]
    await side.call("POST", f"/envs/{env['id']}/products/{product['id']}/deploy")
    roles = await side.call("GET", "/roles", params={"size": 100})
    integration = next(r["id"] for r in roles["items"] if r["name"] == "Integration")
    account = await side.call(
        "POST",
        "/service-accounts",
        json={"name": "marketplace", "roleIds": [integration]},
    )
    side.token = account["token"]


# ------------------------------------------------------------------ the marketplace's side


async def published_node(
    database: Database,
    *,
    bundle: Bundle,
    title: str,
    connection_id: uuid.UUID | None,
    remote_id: str | None,
) -> uuid.UUID:
    """A published node, imported from ``connection_id`` (or portal-native when None)."""
    node = CatalogueNode(
        id=uuid.uuid4(),
        bundle=bundle,
        title=title,
        visibility=Visibility.PUBLIC,
        moderation_state=ModerationState.PUBLISHED,
        published=True,
        source_type=SourceType.IMPORTED if connection_id else SourceType.CUSTOM,
        connection_id=connection_id,
        remote_id=remote_id,
        remote_uuid=remote_id,
    )
    async with database.session() as session, session.begin():
        session.add(node)
    return node.id


async def developer_app(
    database: Database, settings: Settings, owner_id: uuid.UUID, name: str = "my app"
) -> tuple[uuid.UUID, str]:
    """A portal account's app, through the service the portal API calls; its id and key."""
    async with database.session() as session, session.begin():
        owner = await session.get(User, owner_id)
        assert owner is not None
        app, key = await app_service.create(
            session=session,
            owner=owner,
            data=DeveloperAppCreate(name=name, description="for the tests"),
            box=keys.box_for(settings.signing_keys()),
            actor=app_service.actor_of(owner),
            now=utcnow(),
        )
    return app.id, key


async def request_subscription(
    database: Database, owner_id: uuid.UUID, app_id: uuid.UUID, node_id: uuid.UUID
) -> uuid.UUID:
    async with database.session() as session, session.begin():
        owner = await session.get(User, owner_id)
        assert owner is not None
        subscription = await subscription_service.request(
            session=session, owner=owner, app_id=app_id, node_id=node_id, now=utcnow()
        )
    return subscription.id


async def cancel_subscription(
    database: Database, owner_id: uuid.UUID, subscription_id: uuid.UUID
) -> None:
    async with database.session() as session, session.begin():
        owner = await session.get(User, owner_id)
        assert owner is not None
        await subscription_service.cancel(
            session=session, owner=owner, subscription_id=subscription_id, now=utcnow()
        )
