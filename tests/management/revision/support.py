"""Helpers shared by the API and revision tests.

Deployments are written straight to the store here: deploying is another package's
endpoint, and what these tests need is only its effect — a deployment row pointing at a
revision, which is what makes a revision ACTIVE.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from sqlalchemy import delete

from portico.core.db.engine import Database
from portico.management.environment.models import Deployment
from tests.conftest import Account, Org

ROUTE: dict[str, Any] = {"uri": "/orders/:id", "methods": ["GET"], "plugins": {}}


def apis(org: Org, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/apis{suffix}"


def revisions(org: Org, api_id: str, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/apis/{api_id}/revisions{suffix}"


async def make_api(
    client: httpx.AsyncClient, org: Org, who: Account, name: str = "orders", **more: Any
) -> dict[str, Any]:
    response = await client.post(apis(org), json={"name": name, **more}, headers=who.headers)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def make_revision(
    client: httpx.AsyncClient, org: Org, who: Account, api_id: str, **body: Any
) -> dict[str, Any]:
    response = await client.post(revisions(org, api_id), json=body, headers=who.headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def make_env(client: httpx.AsyncClient, org: Org, who: Account, name: str) -> dict[str, Any]:
    response = await client.post(
        f"/api/orgs/{org.id}/envs", json={"name": name}, headers=who.headers
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def make_upstream(
    client: httpx.AsyncClient, org: Org, who: Account, env_id: str, name: str = "backend"
) -> dict[str, Any]:
    response = await client.post(
        f"/api/orgs/{org.id}/envs/{env_id}/upstreams",
        json={"name": name, "specification": {"nodes": [{"host": "127.0.0.1", "port": 8080}]}},
        headers=who.headers,
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def deploy(database: Database, org: Org, revision: dict[str, Any], env_id: str) -> None:
    async with database.session() as session, session.begin():
        session.add(
            Deployment(
                id=uuid.uuid4(),
                org_id=org.id,
                api_id=uuid.UUID(revision["apiId"]),
                revision_id=uuid.UUID(revision["id"]),
                environment_id=uuid.UUID(env_id),
                config_version=1,
            )
        )


async def undeploy(database: Database, revision: dict[str, Any]) -> None:
    async with database.session() as session, session.begin():
        await session.execute(
            delete(Deployment).where(Deployment.revision_id == uuid.UUID(revision["id"]))
        )


async def audit_actions(
    client: httpx.AsyncClient, org: Org, who: Account, entity_id: str
) -> list[str]:
    log = await client.get(f"/api/orgs/{org.id}/audit-log?size=100", headers=who.headers)
    assert log.status_code == 200, log.text
    return [e["action"] for e in log.json()["items"] if e["entityId"] == entity_id]
