"""The data-plane interface: what `portico gateway` nodes call, and their tokens."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import OrderedDict
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.engine import Database
from portico.core.db.session import SessionDep, run_after_commit
from portico.core.errors import NotFound, PermissionDenied, Unauthorized
from portico.core.openapi import raises
from portico.management.access import OrgCaller, bearer_token, parse_id, require
from portico.management.dataplane import service as dataplane_service
from portico.management.dataplane.notifier import NOTIFIER
from portico.management.dataplane.schemas import (
    DataplaneTokenCreate,
    DataplaneTokenIssued,
    DataplaneTokenList,
    DataplaneTokenRead,
    DiscoveredNodes,
    HeartbeatRequest,
    NodeList,
    NodeRead,
    UpstreamHealthRead,
)
from portico.management.dataplane.service import DataplaneTokenNotFound
from portico.management.environment import service as environment_service
from portico.management.environment.models import Environment, EnvironmentConfig
from portico.management.environment.ports import publish
from portico.management.environment.repository import EnvironmentRepository
from portico.management.environment.service import EnvironmentNotFound
from portico.management.upstream import service as upstream_service
from portico.management.upstream.service import UpstreamNotFound

router = APIRouter(tags=["data plane"])
TOKENS = "/api/orgs/{orgId}/envs/{envId}/dataplane-tokens"

#: other control-plane replicas publish without telling this process: look this often
POLL_INTERVAL = 0.5
MAX_WAIT = 60


@raises(Unauthorized, PermissionDenied, NotFound)
def node_bearer(request: Request) -> str:
    """Dependency: the bearer token of a node (a data-plane token) or a user holding
    ``environment.manage`` (an access token), checked by :func:`authorize_request`; a
    missing one is a 401 before anything else is looked at."""
    return bearer_token(request)


NodeBearer = Annotated[str, Depends(node_bearer)]


async def authorize_request(
    request: Request, session: AsyncSession, env_id: uuid.UUID, bearer: str
) -> Environment:
    """The environment a calling node (or a user with environment.manage) may act for."""
    state = request.app.state
    return await dataplane_service.authorize_node(
        session=session,
        bearer=bearer,
        env_id=env_id,
        tokens=state.access_tokens,
        clock=state.clock,
        ip=getattr(request.state, "client_ip", None),
    )


@router.post(TOKENS, response_model=DataplaneTokenIssued, status_code=201)
async def create_dataplane_token(
    envId: str,
    body: DataplaneTokenCreate,
    caller: Annotated[OrgCaller, Depends(require("environment.manage"))],
    session: SessionDep,
) -> DataplaneTokenIssued:
    env = await environment_service.get(
        session=session, caller=caller, env_id=parse_id(envId, EnvironmentNotFound)
    )
    issued = await dataplane_service.issue(session=session, caller=caller, env=env, name=body.name)
    return DataplaneTokenIssued(
        **DataplaneTokenRead.model_validate(issued.row).model_dump(), token=issued.token
    )


@router.get(TOKENS, response_model=DataplaneTokenList)
async def list_dataplane_tokens(
    envId: str,
    caller: Annotated[OrgCaller, Depends(require("environment.read"))],
    session: SessionDep,
) -> DataplaneTokenList:
    env = await environment_service.get(
        session=session, caller=caller, env_id=parse_id(envId, EnvironmentNotFound)
    )
    rows = await dataplane_service.list_tokens(session=session, env=env)
    return DataplaneTokenList(items=[DataplaneTokenRead.model_validate(r) for r in rows])


@router.delete(TOKENS + "/{tokenId}", status_code=204)
async def revoke_dataplane_token(
    envId: str,
    tokenId: str,
    request: Request,
    caller: Annotated[OrgCaller, Depends(require("environment.manage"))],
    session: SessionDep,
) -> Response:
    env = await environment_service.get(
        session=session, caller=caller, env_id=parse_id(envId, EnvironmentNotFound)
    )
    await dataplane_service.revoke(
        session=session,
        caller=caller,
        env=env,
        token_id=parse_id(tokenId, DataplaneTokenNotFound),
        clock=request.app.state.clock,
    )
    return Response(status_code=204)


@router.get(
    "/api/dataplane/v1/envs/{envId}/config",
    responses={
        200: {"description": "The snapshot (the gateway configuration), as JSON."},
        304: {
            "description": "No version newer than `since` appeared within `wait` seconds, "
            "or the snapshot's ETag is the `If-None-Match` sent."
        },
    },
)
async def get_environment_config(
    envId: str,
    request: Request,
    bearer: NodeBearer,
    since: Annotated[int | None, Query(ge=0, description="Version the node has.")] = None,
    wait: Annotated[
        int, Query(ge=0, le=MAX_WAIT, description="Seconds to wait for a newer one.")
    ] = 0,
) -> Response:
    """The environment's latest config snapshot. With ``since``, answers as soon as a version
    newer than ``since`` exists, waiting up to ``wait`` seconds (long-poll), else 304.
    ``ETag`` is the content hash; ``If-None-Match`` with it answers 304."""
    env_id = parse_id(envId, EnvironmentNotFound)
    state = request.app.state
    database: Database = state.database
    async with database.session() as session:
        async with session.begin():
            env = await authorize_request(request, session, env_id, bearer)
            version = await EnvironmentRepository(session).latest_version(env.id)
            if version == 0:  # an environment from before snapshots existed: give it its first
                version = (await publish(session, env, "initial configuration")).version
        run_after_commit(session)
    # No transaction is held while waiting: on SQLite it would block every writer.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    while since is not None and version <= since and (remaining := deadline - loop.time()) > 0:
        await NOTIFIER.wait(env_id, timeout=min(remaining, POLL_INTERVAL))
        async with database.session() as session:
            version = await EnvironmentRepository(session).latest_version(env_id)
    row = await _latest(database, env_id)
    etag = f'"{row.content_hash}"'
    headers = {
        "ETag": etag,
        "X-Portico-Config-Version": str(row.version),
        "Cache-Control": "no-store",
    }
    unchanged = since is not None and row.version <= since
    if unchanged or (since is None and request.headers.get("if-none-match") == etag):
        return Response(status_code=304, headers=headers)
    return Response(_rendered(row), media_type="application/json", headers=headers)


@router.post("/api/dataplane/v1/heartbeat", status_code=204)
async def post_heartbeat(body: HeartbeatRequest, request: Request, bearer: NodeBearer) -> Response:
    """A gateway node reports which config version it runs."""
    state = request.app.state
    database: Database = state.database
    async with database.session() as session, session.begin():
        env = await authorize_request(request, session, body.environment_id, bearer)
        await dataplane_service.heartbeat(
            session=session,
            env=env,
            node_id=body.node_id,
            config_version=body.config_version,
            address=getattr(request.state, "client_ip", None),
            clock=state.clock,
            upstream_health=body.upstream_health,
            discovery=body.discovery,
        )
    return Response(status_code=204)


@router.get("/api/orgs/{orgId}/envs/{envId}/nodes", response_model=NodeList)
async def list_nodes(
    envId: str,
    caller: Annotated[OrgCaller, Depends(require("environment.read"))],
    session: SessionDep,
) -> NodeList:
    """Gateway nodes of the environment, each with the version it runs against the expected."""
    env = await environment_service.get(
        session=session, caller=caller, env_id=parse_id(envId, EnvironmentNotFound)
    )
    expected = await EnvironmentRepository(session).latest_version(env.id)
    rows = await dataplane_service.nodes(session=session, env=env)
    return NodeList(
        expected_version=expected,
        items=[
            NodeRead(
                node_id=n.node_id,
                config_version=n.config_version,
                expected_version=expected,
                in_sync=n.config_version == expected,
                address=n.address,
                first_seen_at=n.first_seen_at,
                last_seen_at=n.last_seen_at,
            )
            for n in rows
        ],
    )


@router.get(
    "/api/orgs/{orgId}/envs/{envId}/upstreams/{upstreamId}/health",
    response_model=UpstreamHealthRead,
)
async def get_upstream_health(
    envId: str,
    upstreamId: str,
    caller: Annotated[OrgCaller, Depends(require("upstream.read"))],
    session: SessionDep,
) -> UpstreamHealthRead:
    """The upstream's targets as each data-plane node of the environment last reported them
    (nodes send their health checkers' view with every heartbeat, and at once when a target
    changes state)."""
    upstream = await upstream_service.get(
        session=session,
        caller=caller,
        env_id=parse_id(envId, EnvironmentNotFound),
        upstream_id=parse_id(upstreamId, UpstreamNotFound),
    )
    return await dataplane_service.upstream_health(session=session, upstream=upstream)


@router.get(
    "/api/orgs/{orgId}/envs/{envId}/upstreams/{upstreamId}/discovered-nodes",
    response_model=DiscoveredNodes,
    tags=["upstreams"],
)
async def list_discovered_nodes(
    envId: str,
    upstreamId: str,
    caller: Annotated[OrgCaller, Depends(require("upstream.read"))],
    session: SessionDep,
) -> DiscoveredNodes:
    """The nodes each data-plane node of the environment sends the upstream's traffic to, as
    its discovery found them (its last heartbeat): with when it last resolved them and why
    its last attempt failed, if it did. Empty for an upstream with listed nodes."""
    return await dataplane_service.discovered_nodes(
        session=session,
        caller=caller,
        env_id=parse_id(envId, EnvironmentNotFound),
        upstream_id=parse_id(upstreamId, UpstreamNotFound),
    )


_RENDERED: OrderedDict[tuple[str, int], bytes] = OrderedDict()


def _rendered(row: EnvironmentConfig) -> bytes:
    """Snapshots are immutable: render each version once (10,000 routes are megabytes)."""
    key = (str(row.environment_id), row.version)
    body = _RENDERED.get(key)
    if body is None:
        body = json.dumps(row.config, separators=(",", ":")).encode()
        _RENDERED[key] = body
        while len(_RENDERED) > 32:
            _RENDERED.popitem(last=False)
    return body


async def _latest(database: Database, env_id: uuid.UUID) -> EnvironmentConfig:
    async with database.session() as session:
        row = await dataplane_service.latest_config(session, env_id)
    assert row is not None  # published above, and versions are only ever added
    return row
