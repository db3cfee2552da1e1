"""Deploy, dry-run and undeploy a revision; list an API's deployments.

A deploy runs the checks of management-api.md in their order — structure, ``plugins`` on
every route, a binding for the environment, every plugin configuration through the runtime's
own check, no method+URI(+host) another API serves there, no other revision of the same API
live there unless ``force`` — and then, in the same transaction, records the deployment and
publishes the environment's next config snapshot. A dry-run does all the checks, changes
nothing, and adds warnings.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import utcnow
from portico.core.errors import Conflict, NotFound
from portico.gateway.snapshot import SnapshotRoute
from portico.management.access import OrgCaller
from portico.management.api.models import Api
from portico.management.api.repository import ApiRepository
from portico.management.deployment import analysis
from portico.management.deployment.compiler import compile_revision
from portico.management.deployment.repository import DeploymentRepository
from portico.management.deployment.secrets import seal_secrets
from portico.management.deployment.snapshot import (
    EnvironmentState,
    compile_state,
    load_state,
    publish,
    source_of,
    upstream_of,
)
from portico.management.environment import service as environment_service
from portico.management.environment.models import Deployment, Environment
from portico.management.environment.repository import EnvironmentRepository
from portico.management.revision.models import Revision
from portico.management.revision.specs import check_stored_specs
from portico.management.upstream.repository import UpstreamRepository


class ApiNotFound(NotFound):
    default_detail = "API not found"


class RevisionNotFound(NotFound):
    default_detail = "revision not found"


@dataclass
class Outcome:
    api: Api
    revision: Revision
    env: Environment
    routes: list[SnapshotRoute]
    warnings: list[str] = field(default_factory=list)
    deployment: Deployment | None = None
    #: the secrets its plugins name, resolved and sealed (``deployment.secrets``)
    sealed: dict[str, str] = field(default_factory=dict)


async def _load(
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    env_id: uuid.UUID,
) -> tuple[Api, Revision, Environment]:
    api = await ApiRepository(session).get_in_org(caller.org_id, api_id)
    if api is None:
        raise ApiNotFound()
    revision = await DeploymentRepository(session).revision_for_update(api.id, revision_id)
    if revision is None:
        raise RevisionNotFound()
    env = await environment_service.get(session=session, caller=caller, env_id=env_id)
    return api, revision, env


async def check(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    env_id: uuid.UUID,
    force: bool,
    keys: tuple[str, ...],
) -> tuple[Outcome, EnvironmentState]:
    """Every deploy check, in order; raises the first failure. Changes nothing. ``keys``:
    the server's, which open the secret store and seal what gateways get."""
    api, revision, env = await _load(session, caller, api_id, revision_id, env_id)
    check_stored_specs(revision.service_spec, revision.route_spec)
    state = await load_state(session, env)
    source = source_of(api, revision, env.id)
    candidate = compile_revision(source, state.global_plugins)
    others = compile_state(state, skip_api=str(api.id))
    conflicts = analysis.find_conflicts(candidate, others)
    if conflicts:
        raise Conflict(conflicts[0].describe(env.name))
    live = next((d for d in state.deployed if d.source.api_id == str(api.id)), None)
    replaces: list[str] = []
    if live is not None and live.source.revision_id != str(revision.id):
        if not force:
            raise Conflict(
                f"Environment already has revision {live.source.revision_number} deployed"
            )
        replaces.append(
            f"revision {live.source.revision_number} is live in {env.name}; deploying with "
            "force replaces it"
        )
    upstreams = dict(state.upstreams)
    if source.upstream_id is not None and source.upstream_id not in upstreams:
        bound = await UpstreamRepository(session).get(uuid.UUID(source.upstream_id))
        if bound is not None:
            upstreams[source.upstream_id] = upstream_of(bound)
    outcome = Outcome(
        api, revision, env, candidate, replaces + analysis.warnings(candidate, upstreams)
    )
    outcome.sealed = await seal_secrets(session, caller.org_id, source, keys)
    return outcome, state


async def deploy(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    env_id: uuid.UUID,
    force: bool,
    keys: tuple[str, ...],
) -> Outcome:
    env = await environment_service.get(session=session, caller=caller, env_id=env_id)
    await EnvironmentRepository(session).lock(env.id)  # before reading what is deployed there
    outcome, _ = await check(
        session=session,
        caller=caller,
        api_id=api_id,
        revision_id=revision_id,
        env_id=env_id,
        force=force,
        keys=keys,
    )
    version = await EnvironmentRepository(session).latest_version(env.id) + 1
    deployment = await DeploymentRepository(session).of_api_in(outcome.api.id, env.id)
    before = _deployment_snapshot(deployment)
    if deployment is None:
        deployment = Deployment(
            id=uuid.uuid4(),
            org_id=caller.org_id,
            api_id=outcome.api.id,
            environment_id=env.id,
            revision_id=outcome.revision.id,
            config_version=version,
        )
        session.add(deployment)
    deployment.revision_id = outcome.revision.id  # a forced swap replaces the live revision
    deployment.deployed_at = utcnow()
    deployment.deployed_by = caller.user_id
    deployment.config_version = version
    deployment.sealed_secrets = outcome.sealed
    await session.flush()
    reason = f"deploy {outcome.api.name} revision {outcome.revision.number}"
    await publish(session, env, reason)
    outcome.deployment = deployment
    await caller.audit(
        session,
        "deployment.deploy",
        deployment.id,
        before=before,
        after=_deployment_snapshot(deployment),
        summary=f"{reason} to {env.name} (config version {version})",
    )
    return outcome


async def undeploy(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    env_id: uuid.UUID,
) -> int:
    """Take the revision out of the environment; returns the new config version."""
    api, revision, env = await _load(session, caller, api_id, revision_id, env_id)
    await EnvironmentRepository(session).lock(env.id)
    repository = DeploymentRepository(session)
    deployment = await repository.of_revision_in(revision.id, env.id)
    if deployment is None:
        raise Conflict(f"revision {revision.number} is not deployed to environment '{env.name}'")
    before = _deployment_snapshot(deployment)
    await repository.delete(deployment)
    row = await publish(session, env, f"undeploy {api.name} revision {revision.number}")
    await caller.audit(
        session,
        "deployment.undeploy",
        deployment.id,
        before=before,
        summary=f"undeploy {api.name} revision {revision.number} from {env.name} "
        f"(config version {row.version})",
    )
    return row.version


async def list_for_api(
    *, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID
) -> list[tuple[Deployment, Revision, Environment]]:
    api = await ApiRepository(session).get_in_org(caller.org_id, api_id)
    if api is None:
        raise ApiNotFound()
    return await DeploymentRepository(session).of_api(api.id)


def _deployment_snapshot(deployment: Deployment | None) -> dict[str, object] | None:
    if deployment is None:
        return None
    return {
        "apiId": str(deployment.api_id),
        "revisionId": str(deployment.revision_id),
        "environmentId": str(deployment.environment_id),
        "configVersion": deployment.config_version,
    }
