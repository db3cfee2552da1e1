"""Building and publishing environment config snapshots.

``publish`` runs inside the transaction of the change that calls for it (deploy, undeploy,
global plugin, gateway hosts): it takes the environment's lock, numbers the next version,
compiles everything deployed there and stores the snapshot. Waiting gateways are woken only
after the transaction commits, so they never see a version that might still roll back.
"""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import utcnow
from portico.core.db.session import after_commit
from portico.gateway.snapshot import (
    EnvironmentSnapshot,
    PluginAttachment,
    SnapshotConsumer,
    SnapshotProduct,
    SnapshotRoute,
    SnapshotUpstream,
    content_hash,
)
from portico.management.api.models import Api
from portico.management.app.snapshot import snapshot_consumers
from portico.management.dataplane.notifier import NOTIFIER
from portico.management.deployment.compiler import RevisionSource, compile_revision
from portico.management.deployment.repository import DeploymentRepository
from portico.management.environment import ports as environment_ports
from portico.management.environment.models import Deployment, Environment, EnvironmentConfig
from portico.management.environment.repository import EnvironmentRepository
from portico.management.plugin.attachments import check_attachments
from portico.management.plugin.repository import GlobalPluginRepository
from portico.management.product.snapshot import deployed_products
from portico.management.revision.models import Revision
from portico.management.upstream.models import Upstream

#: older versions are pruned; a gateway that is further behind simply loads the latest
KEEP_VERSIONS = 20


@dataclass(frozen=True)
class DeployedRevision:
    deployment: Deployment
    source: RevisionSource


@dataclass(frozen=True)
class EnvironmentState:
    """Everything deployed to an environment, read in a handful of queries."""

    env: Environment
    global_plugins: list[PluginAttachment]
    deployed: list[DeployedRevision]
    upstreams: dict[str, SnapshotUpstream]
    consumers: list[SnapshotConsumer] = field(default_factory=list)
    products: list[SnapshotProduct] = field(default_factory=list)


def source_of(
    api: Api,
    revision: Revision,
    env_id: uuid.UUID,
    sealed: Mapping[str, str] | None = None,
) -> RevisionSource:
    """What compiles ``revision`` for ``env_id``; ``sealed``: the secrets its deployment
    there resolved (none for a revision being checked for a deploy)."""
    binding = next((b for b in revision.bindings if b.environment_id == env_id), None)
    return RevisionSource(
        api_id=str(api.id),
        api_name=api.name,
        revision_id=str(revision.id),
        revision_number=revision.number,
        service_spec=revision.service_spec or {},
        route_spec=revision.route_spec or [],
        upstream_id=str(binding.upstream_id) if binding else None,
        sealed=dict(sealed or {}),
    )


async def load_state(session: AsyncSession, env: Environment) -> EnvironmentState:
    deployments = DeploymentRepository(session)
    deployed = [
        DeployedRevision(d, source_of(a, r, env.id, d.sealed_secrets))
        for d, r, a in await deployments.in_environment(env.id)
    ]
    upstreams = {str(u.id): upstream_of(u) for u in await deployments.bound_upstreams(env.id)}
    return EnvironmentState(
        env,
        await global_attachments(session, env.id),
        deployed,
        upstreams,
        await snapshot_consumers(session, env.org_id, env.id),
        await deployed_products(session, env.id),
    )


def upstream_of(upstream: Upstream) -> SnapshotUpstream:
    return SnapshotUpstream(
        id=str(upstream.id), name=upstream.name, specification=upstream.specification
    )


async def global_attachments(session: AsyncSession, env_id: uuid.UUID) -> list[PluginAttachment]:
    rows = await GlobalPluginRepository(session).of_environment(env_id)
    return check_attachments({row.name: row.config for row in rows}, "global", "/globalPlugins")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Building a snapshot allocates a few objects per route and frees none of them until it
    is done; the cyclic collector would rescan the growing heap again and again (measured:
    10x the routes took 20x the time). The build is synchronous, so nothing else runs
    meanwhile, and collection resumes right after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def compile_state(state: EnvironmentState, *, skip_api: str | None = None) -> list[SnapshotRoute]:
    routes: list[SnapshotRoute] = []
    with gc_paused():
        for item in state.deployed:
            if item.source.api_id != skip_api:
                routes.extend(compile_revision(item.source, state.global_plugins))
    return routes


def assemble(
    state: EnvironmentState, routes: Sequence[SnapshotRoute], version: int
) -> EnvironmentSnapshot:
    used = {r.upstream_id for r in routes}
    with gc_paused():
        return _assemble(state, routes, version, used)


def _assemble(
    state: EnvironmentState, routes: Sequence[SnapshotRoute], version: int, used: set[str]
) -> EnvironmentSnapshot:
    document = EnvironmentSnapshot(
        version=version,
        generated_at=utcnow().isoformat(),
        org_id=str(state.env.org_id),
        environment_id=str(state.env.id),
        environment_name=state.env.name,
        gateway_hosts=state.env.gateway_hosts,
        routes=list(routes),
        upstreams={k: v for k, v in sorted(state.upstreams.items()) if k in used},
        consumers=state.consumers,
        global_plugins=state.global_plugins,
        products=state.products,
    )
    return document.model_copy(
        update={"content_hash": content_hash(document.model_dump(mode="json"))}
    )


async def publish(
    session: AsyncSession,
    env: Environment,
    reason: str,
    *,
    state: EnvironmentState | None = None,
) -> EnvironmentConfig:
    """Store the environment's next snapshot (call after the change is flushed)."""
    environments = EnvironmentRepository(session)
    await environments.lock(env.id)
    version = await environments.latest_version(env.id) + 1
    state = state or await load_state(session, env)
    snapshot = assemble(state, compile_state(state), version)
    row = EnvironmentConfig(
        id=uuid.uuid4(),
        environment_id=env.id,
        version=version,
        content_hash=snapshot.content_hash,
        config=snapshot.model_dump(mode="json"),
        reason=reason[:200],
    )
    session.add(row)
    await environments.prune_configs(env.id, up_to=version - KEEP_VERSIONS)
    await session.flush()
    env_id = env.id
    after_commit(session, lambda: NOTIFIER.publish(env_id))
    return row


environment_ports.publish.provide(publish)
