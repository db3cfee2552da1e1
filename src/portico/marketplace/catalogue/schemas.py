"""HTTP shapes of the catalogue (snake_case): API and product nodes as read, and the bodies
that create and change them.

Bodies are strict (no coercion, unknown fields refused). What the service checks beyond a
body's shape (an organisation, connection or API that exists, an OpenAPI document the
connector's reader accepts) it refuses naming the field; everything else is stated in the
JSON schema itself, so that a body the schema allows is one the endpoint accepts.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from portico.core.schema import PlainReadSchema, PlainWriteSchema
from portico.core.validation import invalid
from portico.marketplace.node.models import CatalogueNode
from portico.marketplace.node.schemas import NodeSummary, summary_fields

#: the most APIs a product lists (as a management service's product)
MAX_APIS = 100
#: the largest quota limit and interval: the largest integer every JSON reader holds exactly
#: (JavaScript's Number.MAX_SAFE_INTEGER; the gateway's 64-bit counters hold more, but a
#: reader that reads numbers as doubles would take 2**63 - 1 and its neighbours for one value)
MAX_COUNT = 2**53 - 1
#: an overview or a description (Markdown)
MAX_MARKDOWN = 65_536

#: a character that is not blank (searched, not anchored: a pattern anchored with ``$``
#: also matches before a final newline in most regex engines, which the checks here refuse)
NOT_BLANK = r"[^\x09-\x0d\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
_CONTROL = r"[\x00-\x1f\x7f]"
#: control characters other than tab and line breaks (free text may hold those)
_NOISE = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"


def _storable(value: str) -> None:
    """JSON may carry an unpaired surrogate (``"\\ud800"``), which no store can encode."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must not contain unpaired surrogate characters") from None


def _no_control(value: str) -> str:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise ValueError("must not contain control characters")
    _storable(value)
    return value


def _text(value: str) -> str:
    if any((ord(c) < 0x20 and c not in "\t\n\r") or ord(c) == 0x7F for c in value):
        raise ValueError("must not contain control characters other than tab and line breaks")
    _storable(value)
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


_LINE = {"not": {"pattern": _CONTROL}}
_NAME = {**_LINE, "pattern": NOT_BLANK}
_Line = AfterValidator(_no_control)
_Named = AfterValidator(_not_blank)

#: one line of text, not blank
Title = Annotated[str, Field(min_length=1, max_length=255, json_schema_extra=_NAME), _Line, _Named]
Version = Annotated[str, Field(max_length=64, json_schema_extra=_LINE), _Line]
RemoteId = Annotated[
    str, Field(min_length=1, max_length=255, json_schema_extra=_NAME), _Line, _Named
]
RemoteRef = Annotated[
    str, Field(min_length=1, max_length=64, json_schema_extra=_NAME), _Line, _Named
]
Markdown = Annotated[
    str,
    Field(max_length=MAX_MARKDOWN, json_schema_extra={"not": {"pattern": _NOISE}}),
    AfterValidator(_text),
]
# JSON has no UUID type: a UUID string is the strict form of an id
NodeId = Annotated[uuid.UUID, Field(strict=False)]
OrganisationId = Annotated[
    uuid.UUID, Field(strict=False, description="A portal organisation's id.")
]
ConnectionId = Annotated[uuid.UUID, Field(strict=False)]

#: what ``connectors/openapi.py`` accepts as an OpenAPI document, as a JSON schema
OPENAPI_OBJECT: dict[str, Any] = {
    "type": "object",
    "title": "OpenAPI document",
    "required": ["openapi", "info"],
    "properties": {
        "openapi": {"type": "string", "pattern": r"^3\.[01]\.[0-9]+$"},
        "info": {
            "type": "object",
            "required": ["title", "version"],
            "properties": {"title": {"type": "string"}, "version": {"type": "string"}},
        },
    },
    "anyOf": [
        {"required": ["paths"], "properties": {"paths": {"type": "object"}}},
        {
            "properties": {"openapi": {"pattern": r"^3\.1\."}},
            "anyOf": [
                {"required": ["webhooks"], "properties": {"webhooks": {"type": "object"}}},
                {"required": ["components"], "properties": {"components": {"type": "object"}}},
            ],
        },
    ],
}
DOCUMENTATION = (
    "The API's OpenAPI 3.0 or 3.1 document: the object, or its text in JSON or YAML (stored "
    "as the object it stands for). It needs `openapi` (3.0.x or 3.1.x), `info.title` and "
    "`info.version` (strings), and `paths` as an object (for 3.1, `paths`, `webhooks` or "
    "`components`); at most 5 MiB."
)
Documentation = Annotated[
    dict[str, Any] | str,
    WithJsonSchema(
        {
            "anyOf": [
                OPENAPI_OBJECT,
                {"type": "string", "minLength": 1, "title": "OpenAPI document (JSON or YAML)"},
            ]
        }
    ),
]
AssociatedApis = Annotated[
    list[NodeId],
    Field(
        max_length=MAX_APIS,
        json_schema_extra={"uniqueItems": True},
        description="Ids of API nodes, in the product's order, each at most once.",
    ),
]


def _unique(ids: list[uuid.UUID]) -> list[uuid.UUID]:
    seen: set[uuid.UUID] = set()
    for index, node_id in enumerate(ids):
        if node_id in seen:
            invalid((index,), f"{node_id} is listed more than once")
        seen.add(node_id)
    return ids


def _whole(value: Any) -> Any:
    """A number without a fractional part is an integer in JSON (``10.0`` is ``10``), as
    the schema says; still strict about anything else (a string, a boolean)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Count = Annotated[int, BeforeValidator(_whole)]


class QuotaWrite(PlainWriteSchema):
    """A product's quota, with the rules of the management service's products."""

    limit: Count = Field(
        ge=-1,
        le=MAX_COUNT,
        json_schema_extra={"not": {"const": 0}},
        description="Requests per window, at least 1; -1: unlimited.",
    )
    interval: Count = Field(ge=1, le=MAX_COUNT, description="Window length, in interval_unit.")
    interval_unit: Literal["second", "minute", "hour", "day", "month"]
    key_scope: Literal["app", "developer"] = Field(
        "app", description="Whose requests share a window: each app's, or each developer's."
    )

    @field_validator("limit")
    @classmethod
    def _limit(cls, value: int) -> int:
        if value == 0:
            raise ValueError("must be at least 1, or -1 for unlimited")
        return value


class QuotaRead(PlainReadSchema):
    limit: int = Field(description="Requests per window; -1: unlimited.")
    interval: int
    interval_unit: str
    key_scope: str = Field("app", description="app or developer: whose requests share a window.")


def _omissible(description: str) -> Any:
    """A member that may be left out (then None) but is never null (its schema: see
    :func:`_bound_to_connection`)."""
    return Field(None, description=description)


def _bound_to_connection(remote: tuple[str, ...]) -> Callable[[dict[str, Any]], None]:
    """The schema of a create body whose ``remote`` members need ``connection_id``: each
    stated as depending on it, and none of them (nor ``connection_id``) with the
    ``default: null`` a client could take for a value to send."""

    def rewrite(schema: dict[str, Any]) -> None:
        for name in ("connection_id", *remote):
            schema["properties"][name].pop("default", None)
        schema["dependentRequired"] = {name: ["connection_id"] for name in remote}

    return rewrite


def _not_nullable(names: tuple[str, ...]) -> Callable[[dict[str, Any]], None]:
    """The schema of a PATCH body whose ``names`` may be left out but not be null."""

    def rewrite(schema: dict[str, Any]) -> None:
        for name in names:
            prop = schema["properties"][name]
            kept = [s for s in prop.pop("anyOf") if s != {"type": "null"}]
            prop.pop("default", None)
            (only,) = kept
            schema["properties"][name] = {**only, **prop}

    return rewrite


class _Patch(PlainWriteSchema):
    #: the fields that may be left out but not set to null
    NOT_NULL: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _refuse_null(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name in cls.NOT_NULL:
                if name in data and data[name] is None:
                    invalid((name,), "must not be null (leave it out to keep it)")
        return data


# -------------------------------------------------------------------------------------- APIs


class ApiCreate(PlainWriteSchema):
    """A portal-native API without ``connection_id``; with it, bound to that connection
    (``api_id``, ``uuid`` and ``revision`` only then)."""

    REMOTE: ClassVar[tuple[str, ...]] = ("api_id", "uuid", "revision")
    model_config = ConfigDict(json_schema_extra=_bound_to_connection(REMOTE))

    title: Title
    version: Version = ""
    overview: Markdown = Field("", description="Markdown.")
    documentation: Documentation | None = Field(None, description=DOCUMENTATION)
    organisation: OrganisationId | None = Field(None, description="The owning organisation.")
    connection_id: ConnectionId = _omissible(
        "The gateway connection the API is read from; leave it out for an API written in "
        "the portal."
    )
    api_id: RemoteId = _omissible("The API's id on the connection (unique per connection).")
    uuid: RemoteRef = _omissible("The remote side's own identifier.")
    revision: RemoteRef = _omissible("The remote revision it stands for.")

    @model_validator(mode="after")
    def _remote_needs_connection(self) -> ApiCreate:
        _refuse_remote_without_connection(self, self.REMOTE)
        return self


class ApiUpdate(_Patch):
    """Only the fields sent change; ``documentation: null`` removes the document and
    ``organisation: null`` the owner."""

    NOT_NULL = ("title", "version", "overview")
    model_config = ConfigDict(json_schema_extra=_not_nullable(NOT_NULL))

    title: Title | None = None
    version: Version | None = None
    overview: Markdown | None = Field(None, description="Markdown.")
    documentation: Documentation | None = Field(None, description=DOCUMENTATION)
    organisation: OrganisationId | None = None


class ApiListItem(NodeSummary):
    """An API as a list shows it: without its OpenAPI document (up to 5 MiB each; a page
    of them would be a page of documents), which ``GET /apis/{node}`` has."""

    version: str
    overview: str = Field(description="Markdown.")

    @classmethod
    def of(cls, node: CatalogueNode) -> ApiListItem:
        return cls(**summary_fields(node), version=node.version, overview=node.overview)


class ApiRead(ApiListItem):
    documentation: dict[str, Any] | None = Field(description="The OpenAPI document, or null.")

    @classmethod
    def of(cls, node: CatalogueNode) -> ApiRead:
        return cls(
            **summary_fields(node),
            version=node.version,
            overview=node.overview,
            documentation=node.documentation,
        )


# ---------------------------------------------------------------------------------- products


class ProductCreate(PlainWriteSchema):
    """``product_id`` and ``gateway_type`` only with ``connection_id``."""

    REMOTE: ClassVar[tuple[str, ...]] = ("product_id", "gateway_type")
    model_config = ConfigDict(json_schema_extra=_bound_to_connection(REMOTE))

    title: Title
    description: Markdown = Field("", description="Markdown.")
    associated_apis: AssociatedApis = Field(default_factory=list)
    quota: QuotaWrite | None = Field(None, description="None: no quota of its own.")
    organisation: OrganisationId | None = Field(None, description="The owning organisation.")
    connection_id: ConnectionId = _omissible(
        "The gateway connection the product is read from; leave it out for a product made "
        "in the portal."
    )
    product_id: RemoteId = _omissible("The product's id on the connection (unique per connection).")
    gateway_type: RemoteRef = _omissible(
        "The kind of gateway that enforces it (the connection's source type when left out)."
    )

    @field_validator("associated_apis")
    @classmethod
    def _unique_apis(cls, value: list[uuid.UUID]) -> list[uuid.UUID]:
        return _unique(value)

    @model_validator(mode="after")
    def _remote_needs_connection(self) -> ProductCreate:
        _refuse_remote_without_connection(self, self.REMOTE)
        return self


class ProductUpdate(_Patch):
    """Only the fields sent change; ``associated_apis`` replaces the list (in its order),
    ``quota: null`` removes the quota and ``organisation: null`` the owner."""

    NOT_NULL = ("title", "description", "associated_apis")
    model_config = ConfigDict(json_schema_extra=_not_nullable(NOT_NULL))

    title: Title | None = None
    description: Markdown | None = Field(None, description="Markdown.")
    associated_apis: AssociatedApis | None = None
    quota: QuotaWrite | None = Field(None, description="null removes the quota.")
    organisation: OrganisationId | None = None

    @field_validator("associated_apis")
    @classmethod
    def _unique_apis(cls, value: list[uuid.UUID] | None) -> list[uuid.UUID] | None:
        return None if value is None else _unique(value)


class ProductRead(NodeSummary):
    description: str = Field(description="Markdown.")
    associated_apis: list[uuid.UUID] = Field(description="Its API nodes' ids, in order.")
    quota: QuotaRead | None
    gateway_type: str | None = Field(description="The kind of gateway that enforces it.")

    @classmethod
    def with_apis(cls, node: CatalogueNode, apis: list[uuid.UUID]) -> ProductRead:
        return cls(
            **summary_fields(node),
            description=node.description,
            associated_apis=apis,
            quota=None if node.quota is None else QuotaRead.model_validate(node.quota),
            gateway_type=node.gateway_type,
        )


def _refuse_remote_without_connection(body: PlainWriteSchema, names: tuple[str, ...]) -> None:
    if "connection_id" in body.model_fields_set:
        return
    for name in names:
        if name in body.model_fields_set:
            invalid((name,), "only with connection_id (an API or product bound to a connection)")
