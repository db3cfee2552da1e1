from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from portico.core.schema import ReadSchema, WriteSchema
from portico.core.validation import invalid
from portico.management.revision.models import Revision
from portico.management.revision.specs import MAX_ROUTES

MAX_BINDINGS = 100
# Request schemas are strict, and strict UUIDs refuse the strings JSON carries them as.
Id = Annotated[uuid.UUID, Field(strict=False)]
Status = Literal["ACTIVE", "INACTIVE"]

# The specs are checked field by field by ``revision.specs`` (with the product's wording and
# per-object ``$``); here only their outer type, so that the body itself is well-formed.
ServiceSpecBody = Annotated[
    dict[str, Any],
    Field(
        description="name (≤ 100), desc (≤ 256), plugins (plugin name → config object), "
        "hosts (hostnames, '*.' wildcards). Plugin configs are checked at deploy."
    ),
]
RouteSpecBody = Annotated[
    list[Any],
    Field(
        max_length=MAX_ROUTES,
        description="Route objects: uri (required; ':param' segments, final '*' for a "
        "prefix), plugins (REQUIRED, may be {}), name, methods, hosts, priority (0), "
        "script (≥ 10 characters when present), service_id (non-empty when present), "
        "status (0 or 1; default 1), desc (≤ 256).",
    ),
]


class EnvironmentUpstream(WriteSchema):
    environment_id: Id = Field(description="An environment of this organisation.")
    upstream_id: Id = Field(description="An upstream of that environment.")


def _one_per_environment(items: list[EnvironmentUpstream]) -> None:
    seen: set[uuid.UUID] = set()
    for index, item in enumerate(items):
        if item.environment_id in seen:
            invalid(
                ("environmentUpstreams", index, "environmentId"),
                f"environment '{item.environment_id}' is given more than once",
                str(item.environment_id),
            )
        seen.add(item.environment_id)


EnvironmentUpstreams = Annotated[
    list[EnvironmentUpstream],
    Field(
        max_length=MAX_BINDINGS,
        description="Which upstream the routes target in each environment; at most one "
        "per environment.",
    ),
]


class RevisionCreate(WriteSchema):
    service_spec: ServiceSpecBody = Field(default_factory=dict)
    route_spec: RouteSpecBody = Field(default_factory=list)
    environment_upstreams: EnvironmentUpstreams = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_environments(self) -> Self:
        _one_per_environment(self.environment_upstreams)
        return self


class ServiceSpecReplace(WriteSchema):
    service_spec: ServiceSpecBody


class RouteSpecReplace(WriteSchema):
    route_spec: RouteSpecBody


class BindingsChange(WriteSchema):
    """Both binding endpoints take exactly this shape. Anything else — no
    ``environmentUpstreams``, another key, not a list — is a 400: the product this follows
    clears every binding when the replace endpoint gets a shape it does not expect."""

    environment_upstreams: EnvironmentUpstreams

    @model_validator(mode="after")
    def _unique_environments(self) -> Self:
        _one_per_environment(self.environment_upstreams)
        return self


class UpstreamBindingRead(ReadSchema):
    environment_id: uuid.UUID
    upstream_id: uuid.UUID


class RevisionRead(ReadSchema):
    id: uuid.UUID
    api_id: uuid.UUID
    number: int
    status: Status = Field(description="ACTIVE while deployed to at least one environment.")
    service_spec: dict[str, Any]
    route_spec: list[dict[str, Any]]
    upstream_bindings: list[UpstreamBindingRead]
    deployed_to: list[uuid.UUID] = Field(description="Environments this revision is live in.")
    created_by: uuid.UUID | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, revision: Revision, deployed_to: list[uuid.UUID]) -> RevisionRead:
        return cls(
            id=revision.id,
            api_id=revision.api_id,
            number=revision.number,
            status="ACTIVE" if deployed_to else "INACTIVE",
            service_spec=revision.service_spec,
            route_spec=revision.route_spec,
            upstream_bindings=[
                UpstreamBindingRead(environment_id=b.environment_id, upstream_id=b.upstream_id)
                for b in revision.bindings
            ],
            deployed_to=sorted(deployed_to),
            created_by=revision.created_by,
            created_at=revision.created_at,
            updated_at=revision.updated_at,
        )
