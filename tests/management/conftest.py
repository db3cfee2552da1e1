"""A small world to deploy into: an environment with an upstream, and an API helper."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.conftest import Account, Org


@dataclass
class World:
    client: httpx.AsyncClient
    org: Org
    admin: Account
    env_id: str
    upstream_id: str

    @property
    def base(self) -> str:
        return f"/api/orgs/{self.org.id}"

    async def call(self, method: str, path: str, body: Any = None) -> httpx.Response:
        return await self.client.request(
            method, self.base + path, json=body, headers=self.admin.headers
        )

    async def api(self, name: str, routes: list[dict[str, Any]], **service: Any) -> dict[str, str]:
        """An API with one revision bound to the world's environment; ids of both."""
        api = await self.call("POST", "/apis", {"name": name})
        assert api.status_code == 201, api.text
        revision = await self.revision(api.json()["id"], routes, **service)
        return {"api": api.json()["id"], "revision": revision}

    async def revision(
        self, api_id: str, routes: list[dict[str, Any]], bind: bool = True, **service: Any
    ) -> str:
        body: dict[str, Any] = {"serviceSpec": {"name": "svc", **service}, "routeSpec": routes}
        if bind:
            body["environmentUpstreams"] = [
                {"environmentId": self.env_id, "upstreamId": self.upstream_id}
            ]
        revision = await self.call("POST", f"/apis/{api_id}/revisions", body)
        assert revision.status_code == 201, revision.text
        return str(revision.json()["id"])

    def revision_path(self, ids: dict[str, str]) -> str:
        return f"/apis/{ids['api']}/revisions/{ids['revision']}"

    async def deploy(self, ids: dict[str, str], force: bool = False) -> httpx.Response:
        return await self.call(
            "POST",
            self.revision_path(ids) + "/deploy",
            {"environmentId": self.env_id, "force": force},
        )

    async def dry_run(self, ids: dict[str, str]) -> httpx.Response:
        return await self.call(
            "POST", self.revision_path(ids) + "/deploy/dry-run", {"environmentId": self.env_id}
        )

    async def config(self, query: str = "", token: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else self.admin.headers
        return await self.client.get(
            f"/api/dataplane/v1/envs/{self.env_id}/config{query}", headers=headers
        )


def route(uri: str, methods: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": uri, "uri": uri, "methods": methods or ["GET"], "plugins": {}, **extra}


@pytest.fixture
async def world(client: httpx.AsyncClient, org: Org, admin: Account) -> World:
    env = await client.post(
        f"/api/orgs/{org.id}/envs",
        json={"name": "prod", "gatewayHosts": ["api.example.com"]},
        headers=admin.headers,
    )
    assert env.status_code == 201, env.text
    upstream = await client.post(
        f"/api/orgs/{org.id}/envs/{env.json()['id']}/upstreams",
        json={"name": "backend", "specification": {"nodes": [{"host": "127.0.0.1", "port": 9}]}},
        headers=admin.headers,
    )
    assert upstream.status_code == 201, upstream.text
    return World(client, org, admin, env.json()["id"], upstream.json()["id"])
