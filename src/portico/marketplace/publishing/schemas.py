"""HTTP shapes of publishing (snake_case): the bulk bodies, their per-item reports, and the
portals syndication can target.

Request bodies are strict; what JSON schema can say is said in the document (a body whose
members depend on ``visibility`` is described as one alternative per case), what it cannot
(an id that names no organisation) is a 400 naming the member.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal, Self, get_args

from pydantic import ConfigDict, Field, model_validator

from portico.core.schema import PlainReadSchema, PlainWriteSchema
from portico.core.validation import invalid
from portico.marketplace.node.models import Bundle, ModerationState, Visibility
from portico.marketplace.node.moderation import TRANSITIONS
from portico.marketplace.organisation.models import Organisation

MAX_NODES = 500
MAX_ORGANISATIONS = 100
MAX_TEAMS = 100

# strict bodies, but a UUID travels in JSON as a string
Id = Annotated[uuid.UUID, Field(strict=False)]
NodeIds = Annotated[
    list[Id],
    Field(
        min_length=1,
        max_length=MAX_NODES,
        description=f"Node ids (APIs or products), each once; at most {MAX_NODES}.",
        json_schema_extra={"uniqueItems": True},
    ),
]
OrganisationIds = Annotated[
    list[Id],
    Field(
        max_length=MAX_ORGANISATIONS,
        description="Portal organisations' ids (GET /publishing/portals), each once.",
        json_schema_extra={"uniqueItems": True},
    ),
]
TeamIds = Annotated[
    list[Id],
    Field(
        max_length=MAX_TEAMS,
        description="Teams of the listed organisations, each once: the organisation of a "
        "team listed here sees the nodes through those teams only.",
        json_schema_extra={"uniqueItems": True},
    ),
]
TransitionId = Literal[
    "create_new_draft", "submit_for_review", "publish", "archive", "restore_to_draft"
]
assert set(get_args(TransitionId)) == {t.id for t in TRANSITIONS}
Outcome = Literal["applied", "unchanged", "failed"]


def _unique(field: str, ids: list[uuid.UUID] | None) -> None:
    seen: set[uuid.UUID] = set()
    for index, value in enumerate(ids or ()):
        if value in seen:
            invalid((field, index), f"'{value}' is given more than once", str(value))
        seen.add(value)


class TransitionBulk(PlainWriteSchema):
    nodes: NodeIds
    transition: TransitionId = Field(
        description="The editorial transition to apply to each node (its permission is "
        "checked for each)."
    )

    @model_validator(mode="after")
    def _unique_nodes(self) -> Self:
        _unique("nodes", self.nodes)
        return self


def _one_alternative_per_visibility(schema: dict[str, Any]) -> None:
    """Organisation visibility takes ``organisations`` (and ``teams``); public and internal
    take neither."""
    properties = schema["properties"]
    visibility = properties["visibility"]
    scoped = {
        "nodes": properties["nodes"],
        "visibility": {**visibility, "enum": [Visibility.ORGANISATION.value]},
        "organisations": {**properties["organisations"], "minItems": 1},
        "teams": properties["teams"],
    }
    scoped["organisations"].pop("default", None)
    scoped["teams"].pop("default", None)
    open_to_all = {
        "nodes": properties["nodes"],
        "visibility": {
            **visibility,
            "enum": [Visibility.PUBLIC.value, Visibility.INTERNAL.value],
        },
    }
    title, description = schema.get("title"), schema.get("description")
    schema.clear()
    schema.update(
        title=title,
        oneOf=[
            {
                "type": "object",
                "title": "Organisation visibility",
                "properties": scoped,
                "required": ["nodes", "visibility", "organisations"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "title": "Public or internal visibility",
                "properties": open_to_all,
                "required": ["nodes", "visibility"],
                "additionalProperties": False,
            },
        ],
        **({"description": description} if description else {}),
    )


class VisibilityChange(PlainWriteSchema):
    """``organisation`` (the listed organisations, optionally through some of their teams),
    ``internal`` (signed-in portal users) or ``public`` (everyone)."""

    model_config = ConfigDict(json_schema_extra=_one_alternative_per_visibility)

    nodes: NodeIds
    visibility: Literal["public", "internal", "organisation"] = Field(
        description="public, internal or organisation."
    )
    # absent unless given; null is refused like any other value that is not a list
    organisations: OrganisationIds = Field(None)  # type: ignore[arg-type]
    teams: TeamIds = Field(None)  # type: ignore[arg-type]

    @model_validator(mode="after")
    def _members_of_the_visibility(self) -> Self:
        _unique("nodes", self.nodes)
        given = self.model_fields_set
        if self.visibility == Visibility.ORGANISATION.value:
            if not self.organisations:
                invalid(("organisations",), "organisation visibility needs organisations")
            _unique("organisations", self.organisations)
            _unique("teams", self.teams)
        else:
            for member in ("organisations", "teams"):
                if member in given:
                    invalid((member,), f"only with organisation visibility, not {self.visibility}")
        return self

    @property
    def organisation_ids(self) -> list[uuid.UUID]:
        return list(self.organisations or ())

    @property
    def team_ids(self) -> list[uuid.UUID]:
        return list(self.teams or ())


class SyndicationChange(PlainWriteSchema):
    nodes: NodeIds
    organisations: OrganisationIds
    operation: Literal["add", "remove", "set"] = Field(
        description="add: publish to these portals too; remove: no longer to these; set: "
        "to exactly these. Publications a product implies for its APIs stay whatever the "
        "operation."
    )

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        _unique("nodes", self.nodes)
        _unique("organisations", self.organisations)
        return self


# ------------------------------------------------------------------------------ reports


class TransitionReport(PlainReadSchema):
    id: str = Field(description="The node id as given.")
    outcome: Outcome = Field(description="applied, or failed (meta.failed says why).")
    bundle: Bundle | None = Field(description="Null when no node has the id.")
    moderation_state: ModerationState | None = Field(description="The state it is now in.")
    published: bool | None


class AudienceRead(PlainReadSchema):
    organisation: uuid.UUID
    team: uuid.UUID | None = Field(description="Null: the whole organisation.")


class VisibilityReport(PlainReadSchema):
    id: str = Field(description="The node id as given.")
    outcome: Outcome = Field(
        description="applied, unchanged (it already was so), or failed (meta.failed says why)."
    )
    bundle: Bundle | None = Field(description="Null when no node has the id.")
    visibility: Visibility | None = Field(description="Its visibility now.")
    audience: list[AudienceRead] | None = Field(
        description="Who sees an organisation-visible node now (empty otherwise)."
    )


class Publication(PlainReadSchema):
    organisation: uuid.UUID = Field(description="The portal organisation published to.")
    explicit: bool = Field(description="Syndicated on its own (not only through a product).")
    implied_by: list[uuid.UUID] = Field(
        description="The products of this API syndicated to that portal, which publish it "
        "there too (empty for products)."
    )


class SyndicationReport(PlainReadSchema):
    id: str = Field(description="The node id as given.")
    outcome: Outcome = Field(
        description="applied, unchanged (its own syndication already was so), or failed "
        "(meta.failed says why)."
    )
    bundle: Bundle | None = Field(description="Null when no node has the id.")
    portals: list[Publication] | None = Field(
        description="Every portal it is published to now, explicitly or through a product."
    )
    kept: list[Publication] = Field(
        description="Publications the request asked to end that remain, implied by a "
        "product still syndicated there (the API's own syndication was ended)."
    )


class PortalRead(PlainReadSchema):
    id: uuid.UUID = Field(description="The organisation's id (what syndication names).")
    name: str
    domains: list[str] = Field(description="The host names its portal answers on.")
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, organisation: Organisation) -> PortalRead:
        return cls(
            id=organisation.id,
            name=organisation.name,
            domains=[str(d) for d in organisation.domains or ()],
            created_at=organisation.created_at,
            updated_at=organisation.updated_at,
        )
