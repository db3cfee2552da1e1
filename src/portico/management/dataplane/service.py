"""Data-plane tokens, and what a gateway node is allowed to read."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.account import find_by_id
from portico.core.clock import Clock
from portico.core.errors import NotFound, PermissionDenied, Unauthorized
from portico.core.tokens import AccessTokenService, hash_opaque_token, new_opaque_token
from portico.management.access import Caller, OrgCaller, org_caller
from portico.management.dataplane.models import DataplaneNode, DataplaneToken
from portico.management.dataplane.repository import DataplaneRepository
from portico.management.dataplane.schemas import (
    DiscoveredNode,
    DiscoveredNodes,
    DiscoveredOnNode,
    DiscoveryReport,
    NodeUpstreamHealthRead,
    TargetHealthRead,
    UpstreamDiscovery,
    UpstreamHealthRead,
    UpstreamHealthReport,
)
from portico.management.environment.models import Environment, EnvironmentConfig
from portico.management.environment.repository import EnvironmentRepository
from portico.management.upstream import service as upstream_service
from portico.management.upstream.models import Upstream

TOKEN_PREFIX = "pdp_"  # noqa: S105 - tells a data-plane token from a user's JWT at a glance (and in scanners)


class DataplaneTokenNotFound(NotFound):
    default_detail = "data-plane token not found"


@dataclass(frozen=True)
class IssuedDataplaneToken:
    row: DataplaneToken
    token: str  # shown once


async def issue(
    *, session: AsyncSession, caller: OrgCaller, env: Environment, name: str
) -> IssuedDataplaneToken:
    token = TOKEN_PREFIX + new_opaque_token()
    row = DataplaneToken(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        environment_id=env.id,
        name=name,
        token_hash=hash_opaque_token(token),
    )
    session.add(row)
    await session.flush()
    await caller.audit(
        session,
        "dataplane_token.create",
        row.id,
        after={"name": name, "environmentId": str(env.id)},
    )
    return IssuedDataplaneToken(row, token)


async def list_tokens(*, session: AsyncSession, env: Environment) -> list[DataplaneToken]:
    return await DataplaneRepository(session).tokens_of(env.id)


async def revoke(
    *, session: AsyncSession, caller: OrgCaller, env: Environment, token_id: uuid.UUID, clock: Clock
) -> None:
    row = await DataplaneRepository(session).token_of(env.id, token_id)
    if row is None:
        raise DataplaneTokenNotFound()
    if row.revoked_at is None:
        row.revoked_at = clock.now()
        await caller.audit(session, "dataplane_token.revoke", row.id, before={"name": row.name})


async def authorize_node(
    *,
    session: AsyncSession,
    bearer: str,
    env_id: uuid.UUID,
    tokens: AccessTokenService,
    clock: Clock,
    ip: str | None,
) -> Environment:
    """The environment a node may read: with a data-plane token of that environment, or a
    user token holding ``environment.manage`` in its organisation."""
    env = await EnvironmentRepository(session).get(env_id)
    if bearer.startswith(TOKEN_PREFIX):
        row = await DataplaneRepository(session).token_by_hash(hash_opaque_token(bearer))
        if row is None or row.revoked_at is not None:
            raise Unauthorized("invalid data-plane token")
        if env is None or row.environment_id != env.id:
            raise NotFound("environment not found")
        row.last_used_at = clock.now()
        return env
    claims = tokens.verify(bearer)
    user = await find_by_id(session, uuid.UUID(str(claims["sub"])))
    if user is None or not user.can_sign_in:
        raise Unauthorized("invalid token")
    if env is None:
        raise NotFound("environment not found")
    scoped = await org_caller(Caller(user=user, request_id=None, ip=ip), session, env.org_id)
    if "environment.manage" not in scoped.permissions:
        raise PermissionDenied("environment.manage")
    return env


async def latest_config(session: AsyncSession, env_id: uuid.UUID) -> EnvironmentConfig | None:
    return await EnvironmentRepository(session).latest_config(env_id)


async def heartbeat(
    *,
    session: AsyncSession,
    env: Environment,
    node_id: str,
    config_version: int,
    address: str | None,
    clock: Clock,
    upstream_health: list[UpstreamHealthReport] | None = None,
    discovery: Mapping[uuid.UUID, DiscoveryReport] | None = None,
) -> DataplaneNode:
    """Record what a node reports: the version it runs and, when it says, its upstreams'
    health (a node that does not report it has none kept: an old view would pass for live)."""
    now = clock.now()
    node = await DataplaneRepository(session).node(env.id, node_id)
    if node is None:
        node = DataplaneNode(
            environment_id=env.id, node_id=node_id, first_seen_at=now, last_seen_at=now
        )
        session.add(node)
    node.config_version = config_version
    node.address = address
    node.discovery = {
        str(upstream_id): report.model_dump(mode="json", by_alias=False)
        for upstream_id, report in (discovery or {}).items()
    }
    node.last_seen_at = now
    node.upstream_health = (
        None
        if upstream_health is None
        else [report.model_dump(mode="json") for report in upstream_health]
    )
    await session.flush()
    return node


async def nodes(*, session: AsyncSession, env: Environment) -> list[DataplaneNode]:
    return await DataplaneRepository(session).nodes_of(env.id)


async def upstream_health(*, session: AsyncSession, upstream: Upstream) -> UpstreamHealthRead:
    """The upstream's health as each data-plane node of its environment last reported it."""
    checks = upstream.specification.get("checks") or {}
    items = []
    for node in await DataplaneRepository(session).nodes_of(upstream.environment_id):
        reported = next(
            (
                entry
                for entry in node.upstream_health or []
                if entry.get("upstream_id") == str(upstream.id)
            ),
            None,
        )
        items.append(
            NodeUpstreamHealthRead(
                node_id=node.node_id,
                address=node.address,
                config_version=node.config_version,
                last_seen_at=node.last_seen_at,
                reported=reported is not None,
                probing=bool(reported and reported["probing"]),
                targets=[
                    TargetHealthRead.model_validate(target)
                    for target in (reported or {}).get("targets", [])
                ],
            )
        )
    return UpstreamHealthRead(
        upstream_id=upstream.id,
        environment_id=upstream.environment_id,
        active=checks.get("active") is not None,
        passive=checks.get("passive") is not None,
        items=items,
    )


async def discovered_nodes(
    *, session: AsyncSession, caller: OrgCaller, env_id: uuid.UUID, upstream_id: uuid.UUID
) -> DiscoveredNodes:
    """What each data-plane node of the environment last reported of the upstream's
    discovery (nodes that run no config holding it report nothing)."""
    upstream = await upstream_service.get(
        session=session, caller=caller, env_id=env_id, upstream_id=upstream_id
    )
    discovery = upstream.specification.get("discovery")
    items: list[DiscoveredOnNode] = []
    for node in await DataplaneRepository(session).nodes_of(upstream.environment_id):
        report = (node.discovery or {}).get(str(upstream.id))
        if report is None or discovery is None:
            continue
        resolved = report.get("resolved_at")
        items.append(
            DiscoveredOnNode(
                node_id=node.node_id,
                config_version=node.config_version,
                last_seen_at=node.last_seen_at,
                resolved_at=None if resolved is None else datetime.fromtimestamp(resolved, UTC),
                error=report.get("error"),
                failures=int(report.get("failures", 0)),
                nodes=[DiscoveredNode.model_validate(n) for n in report.get("nodes", [])],
            )
        )
    return DiscoveredNodes(
        upstream_id=upstream.id,
        discovery=None
        if discovery is None
        else UpstreamDiscovery(type=discovery["type"], service_name=discovery["serviceName"]),
        items=items,
    )
