"""Portal features (permission ``manage portal features``): the registry synced from the
installed modules, each feature's platform state and settings, and per-organisation
overrides. The features of ``admin_api`` and ``features`` are always on (409 when asked to
switch them off)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.feature import service as feature_service
from portico.marketplace.feature.schemas import (
    FeatureRead,
    FeatureUpdate,
    OrganisationFeatureRead,
    OverrideWrite,
    SyncReport,
)
from portico.marketplace.feature.service import FeatureAlwaysOn, OrganisationNotFound
from portico.marketplace.modules import Module

router = APIRouter(tags=["features"])

LIST = ListSpec(
    sortable=frozenset({"key", "label", "created_at", "updated_at"}),
    default_sort="key",
    filterable=frozenset({"enabled", "installed"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
BOOLEAN = {"type": "string", "enum": ["true", "false"]}
PLATFORM_FILTERS: dict[str, dict[str, Any]] = {
    "enabled": {
        "description": "Features on (true) or off (false) platform-wide.",
        "schema": BOOLEAN,
    },
    "installed": {
        "description": "Features whose module is installed (true) or was removed (false).",
        "schema": BOOLEAN,
    },
}
ORGANISATION_FILTERS: dict[str, dict[str, Any]] = {
    **PLATFORM_FILTERS,
    "enabled": {
        "description": "Features on (true) or off (false) for the organisation (effective).",
        "schema": BOOLEAN,
    },
}
ALWAYS_ON = problems(
    FeatureAlwaysOn,
    detail="The feature can never be switched off (`admin_api`: sign-in; `features`: what "
    "switches features back on).",
)
Manager = Annotated[SiteCaller, Depends(require("manage portal features"))]


def installed_modules(request: Request) -> Sequence[Module]:
    modules: Sequence[Module] = request.app.state.modules
    return modules


Modules = Annotated[Sequence[Module], Depends(installed_modules)]


@router.get(
    "/features",
    response_model=Collection[FeatureRead],
    openapi_extra={"parameters": LIST.openapi_parameters(PLATFORM_FILTERS)},
)
async def list_features(
    request: Request,
    _caller: Manager,
    session: SessionDep,
    modules: Modules,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[FeatureRead]:
    """Every registered feature with its platform-wide state, by key. Filters:
    ``filter[enabled]``, ``filter[installed]``."""
    page, data = await feature_service.list_(session=session, query=query, modules=modules)
    return collection(request, page, data)


@router.post("/features/sync", response_model=Envelope[SyncReport])
async def sync_features(
    request: Request, caller: Manager, session: SessionDep, modules: Modules
) -> Envelope[SyncReport]:
    """Reconcile the registry with the installed modules: register the features of new
    modules (on), mark removed those whose module is gone (their state and overrides are
    kept), restore those whose module is back. Idempotent."""
    report = await feature_service.sync(
        session=session, actor=caller.actor, modules=modules, now=request.app.state.clock.now()
    )
    return Envelope[SyncReport](data=report)


@router.get("/features/{feature_key}", response_model=Envelope[FeatureRead])
async def get_feature(
    feature_key: str, _caller: Manager, session: SessionDep, modules: Modules
) -> Envelope[FeatureRead]:
    """One feature: platform state, settings and their schema."""
    feature = await feature_service.get(session=session, key=feature_key)
    return Envelope[FeatureRead](data=feature_service.read(feature, modules))


@router.patch("/features/{feature_key}", response_model=Envelope[FeatureRead], responses=ALWAYS_ON)
async def update_feature(
    feature_key: str,
    body: FeatureUpdate,
    request: Request,
    caller: Manager,
    session: SessionDep,
    modules: Modules,
) -> Envelope[FeatureRead]:
    """Switch the feature on or off platform-wide (``enabled``) and/or replace its settings
    (``config``, checked against ``settings_schema``). Off, its module's endpoints answer 403
    ``/problems/feature-disabled``, except for organisations whose override says on."""
    feature = await feature_service.update(
        session=session,
        actor=caller.actor,
        key=feature_key,
        data=body,
        modules=modules,
        now=request.app.state.clock.now(),
    )
    return Envelope[FeatureRead](data=feature_service.read(feature, modules))


@router.get(
    "/organisations/{gid}/features",
    response_model=Collection[OrganisationFeatureRead],
    openapi_extra={"parameters": LIST.openapi_parameters(ORGANISATION_FILTERS)},
)
async def list_organisation_features(
    gid: str,
    request: Request,
    _caller: Manager,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[OrganisationFeatureRead]:
    """The effective state of every registered feature for one portal organisation: its
    override when set, else the platform's (``source`` says which)."""
    page, data = await feature_service.organisation_features(
        session=session, organisation_id=parse_uuid(gid, OrganisationNotFound), query=query
    )
    return collection(request, page, data)


@router.patch(
    "/organisations/{gid}/features/{feature_key}",
    response_model=Envelope[OrganisationFeatureRead],
    responses=ALWAYS_ON,
)
async def set_organisation_feature(
    gid: str,
    feature_key: str,
    body: OverrideWrite,
    caller: Manager,
    session: SessionDep,
    modules: Modules,
) -> Envelope[OrganisationFeatureRead]:
    """``{"enabled": true|false}`` sets the organisation's override, which beats the
    platform state either way; ``{"enabled": null}`` clears it."""
    result = await feature_service.set_override(
        session=session,
        actor=caller.actor,
        organisation_id=parse_uuid(gid, OrganisationNotFound),
        key=feature_key,
        enabled=body.enabled,
        modules=modules,
    )
    return Envelope[OrganisationFeatureRead](data=result)
