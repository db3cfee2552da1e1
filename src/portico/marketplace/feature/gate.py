"""What makes a feature that is off really off: every route of its module depends on the
module's gate (``marketplace/app.py`` includes the module's routers with it), which answers
403 ``/problems/feature-disabled`` naming the feature.

Why 403 and not 404: the endpoint exists and is described in ``/openapi.json`` (the module
is installed), and the caller is told that the installation refuses it by policy, which an
administrator can change; a 404 would read as a wrong path or id (every route with an id
answers 404 for those) and would hide what to do about it.

Order: the caller is authenticated first (an anonymous call is 401 whatever the feature's
state, and learns nothing of it), then the feature, then the endpoint's own permission and
query check (``require``).

On a route whose path names a portal organisation (``{group}`` or ``{gid}``), the state is
that organisation's effective one (its override, else the platform's). The gate reads the
store on every call (one indexed row): a switch takes effect on every replica at once.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from fastapi import Depends, Request, params

from portico.core.db.session import SessionDep
from portico.core.errors import Forbidden
from portico.core.openapi import problem_content, raises
from portico.marketplace.access import SiteCallerDep
from portico.marketplace.feature import service as feature_service
from portico.marketplace.modules import Module
from portico.marketplace.openapi import FORBIDDEN

#: the path parameters that name a portal organisation on the admin API
ORGANISATION_PARAMETERS = ("group", "gid")


class FeatureDisabled(Forbidden):
    kind = "feature-disabled"
    title = "Feature Disabled"
    default_detail = "This feature is switched off."
    description = (
        "The endpoint belongs to a portal feature that an administrator switched off, "
        "platform-wide or for the organisation the path names (`feature` names it; `detail` "
        "may carry the administrator's notice). Nothing was done. An account with `manage "
        "portal features` can switch it back on: `PATCH /features/{feature}` with "
        '`{"enabled": true}`, or the organisation\'s override.'
    )

    def __init__(self, feature: str, notice: str | None = None) -> None:
        self.feature = feature
        detail = f"feature '{feature}' is switched off"
        super().__init__(f"{detail}: {notice}" if notice else detail)

    def to_problem(self) -> dict[str, Any]:
        return {**super().to_problem(), "feature": self.feature}


@dataclass(frozen=True)
class Gate:
    """What ``include_router`` takes to put a module's routes behind its feature."""

    dependencies: list[params.Depends] = field(default_factory=list)
    responses: dict[int | str, dict[str, Any]] = field(default_factory=dict)


def feature_gate(module: Module) -> Gate:
    """The gate of ``module``'s routes; none for a module that is always on."""
    if module.always_on:
        return Gate()
    key = module.name

    @raises(FeatureDisabled)
    async def gate(request: Request, _caller: SiteCallerDep, session: SessionDep) -> None:
        organisation_id = _organisation_in(request)
        if not await feature_service.is_enabled(session, key, organisation_id=organisation_id):
            raise FeatureDisabled(key, await feature_service.notice(session, key))

    gate.__name__ = f"feature_{key}"
    described = (
        f"{FORBIDDEN} Or the feature `{key}` is switched off (`/problems/feature-disabled`, "
        "`feature` names it)."
    )
    return Gate(
        dependencies=[Depends(gate)],
        responses={403: {"description": described, "content": problem_content()}},
    )


def _organisation_in(request: Request) -> uuid.UUID | None:
    for name in ORGANISATION_PARAMETERS:
        raw = request.path_params.get(name)
        if raw is not None:
            try:
                return uuid.UUID(str(raw))
            except ValueError:
                return None  # names nothing: the route answers its 404
    return None
