from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.management.access import OrgCaller, parse_id, require
from portico.management.deployment import service as deployment_service
from portico.management.deployment.schemas import (
    DeploymentList,
    DeploymentRead,
    DeployRequest,
    DeployResult,
    DryRunResult,
    EnvironmentRequest,
    UndeployResult,
)
from portico.management.deployment.service import ApiNotFound, RevisionNotFound
from portico.management.secret.endpoints import Keys

router = APIRouter(prefix="/api/orgs/{orgId}/apis", tags=["deployments"])
Deployer = Annotated[OrgCaller, Depends(require("api.deploy"))]
Reader = Annotated[OrgCaller, Depends(require("api.read"))]
REVISION = "/{apiId}/revisions/{revisionId}"


@router.post(
    f"{REVISION}/deploy",
    response_model=DeployResult,
    responses=problems(
        Conflict,
        detail="A route conflicts with another deployed API's, or another revision is "
        "live (deploy with force).",
    ),
)
async def deploy_revision(
    apiId: str,
    revisionId: str,
    body: DeployRequest,
    caller: Deployer,
    session: SessionDep,
    keys: Keys,
) -> DeployResult:
    """Validate the revision as the gateway will run it and make it live in the environment."""
    outcome = await deployment_service.deploy(
        session=session,
        caller=caller,
        api_id=parse_id(apiId, ApiNotFound),
        revision_id=parse_id(revisionId, RevisionNotFound),
        env_id=body.environment_id,
        force=body.force,
        keys=keys,
    )
    assert outcome.deployment is not None
    return DeployResult(
        **_read(outcome.deployment, outcome.revision.number, outcome.env.name).model_dump(),
        message=f"revision {outcome.revision.number} of {outcome.api.name} deployed to "
        f"{outcome.env.name} ({len(outcome.routes)} routes)",
        warnings=outcome.warnings,
    )


@router.post(
    f"{REVISION}/deploy/dry-run",
    response_model=DryRunResult,
    responses=problems(Conflict, detail="A route conflicts with another deployed API's."),
)
async def dry_run_revision(
    apiId: str,
    revisionId: str,
    body: EnvironmentRequest,
    caller: Deployer,
    session: SessionDep,
    keys: Keys,
) -> DryRunResult:
    """Every check of a deploy, with warnings; nothing is changed."""
    outcome, _ = await deployment_service.check(
        session=session,
        caller=caller,
        api_id=parse_id(apiId, ApiNotFound),
        revision_id=parse_id(revisionId, RevisionNotFound),
        env_id=body.environment_id,
        force=True,  # a dry-run reports a live revision as a warning, not a failure
        keys=keys,
    )
    result = DryRunResult(
        success=True,
        message=f"revision {outcome.revision.number} can be deployed to {outcome.env.name}",
        warnings=outcome.warnings,
        routes=len(outcome.routes),
    )
    await session.rollback()  # nothing a dry-run touched may be kept
    return result


@router.post(
    f"{REVISION}/undeploy",
    response_model=UndeployResult,
    responses=problems(Conflict, detail="The revision is not deployed to this environment."),
)
async def undeploy_revision(
    apiId: str, revisionId: str, body: EnvironmentRequest, caller: Deployer, session: SessionDep
) -> UndeployResult:
    version = await deployment_service.undeploy(
        session=session,
        caller=caller,
        api_id=parse_id(apiId, ApiNotFound),
        revision_id=parse_id(revisionId, RevisionNotFound),
        env_id=body.environment_id,
    )
    return UndeployResult(message="undeployed", config_version=version)


@router.get("/{apiId}/deployments", response_model=DeploymentList)
async def list_deployments(apiId: str, caller: Reader, session: SessionDep) -> DeploymentList:
    rows = await deployment_service.list_for_api(
        session=session, caller=caller, api_id=parse_id(apiId, ApiNotFound)
    )
    return DeploymentList(items=[_read(d, r.number, e.name) for d, r, e in rows])


def _read(deployment, revision_number: int, environment_name: str) -> DeploymentRead:  # type: ignore[no-untyped-def]
    return DeploymentRead(
        id=deployment.id,
        api_id=deployment.api_id,
        revision_id=deployment.revision_id,
        revision_number=revision_number,
        environment_id=deployment.environment_id,
        environment_name=environment_name,
        deployed_at=deployment.deployed_at,
        config_version=deployment.config_version,
    )
