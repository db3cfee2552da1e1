"""HTTP shapes of gateway connections (snake_case). Secret fields are write-only: a
connection's ``config`` never shows them."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field

from portico.core.schema import PlainReadSchema, PlainWriteSchema
from portico.marketplace.connection.models import ConnectionStatus, GatewayConnection
from portico.marketplace.connectors.registry import CONNECTORS

CONFIG_DESCRIPTION = (
    "One value per connection field of the source type (`GET /sources/{source}`): every "
    "required field, secret ones included (no partial update), and no other."
)


def _by_source(*, named: bool) -> Callable[[dict[str, Any]], None]:
    """The body's schema as the service checks it: one alternative per source type, with
    the connection fields of its connector as ``config`` (the model itself takes any object
    there, and the service refuses what does not fit, naming ``/config/<field>``)."""

    def rewrite(schema: dict[str, Any]) -> None:
        name = schema["properties"].get("name")
        alternatives = []
        for connector in CONNECTORS.values():
            properties: dict[str, Any] = {
                "source": {"const": connector.id, "title": connector.label},
                "config": {**connector.config_schema(), "description": CONFIG_DESCRIPTION},
            }
            if named:
                properties = {"name": name, **properties}
            alternatives.append(
                {
                    "type": "object",
                    "title": connector.label,
                    "properties": properties,
                    "required": list(properties),
                    "additionalProperties": False,
                }
            )
        title, description = schema.get("title"), schema.get("description")
        schema.clear()
        schema.update(
            title=title,
            oneOf=alternatives,
            discriminator={"propertyName": "source"},
            **({"description": description} if description else {}),
        )

    return rewrite


class ConnectionCheck(PlainWriteSchema):
    """What ``POST /gateways/connections/test`` checks without saving anything."""

    model_config = ConfigDict(json_schema_extra=_by_source(named=False))

    source: str = Field(min_length=1, max_length=64, description="A source type's id.")
    config: dict[str, Any] = Field(description=CONFIG_DESCRIPTION)


class GatewayConnectionWrite(PlainWriteSchema):
    """A connection to create, or its replacement: every field, full credentials included."""

    model_config = ConfigDict(json_schema_extra=_by_source(named=True))

    name: str = Field(min_length=1, max_length=200, description="Unique among connections.")
    source: str = Field(min_length=1, max_length=64, description="A source type's id.")
    config: dict[str, Any] = Field(description=CONFIG_DESCRIPTION)


class GatewayConnectionRead(PlainReadSchema):
    id: uuid.UUID
    name: str
    source: str
    config: dict[str, Any] = Field(description="The connection fields, secret ones omitted.")
    status: ConnectionStatus = Field(description="The outcome of the last check.")
    last_checked: datetime = Field(description="When the connector last checked it.")
    created_by: uuid.UUID | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, connection: GatewayConnection) -> GatewayConnectionRead:
        return cls.model_validate(connection)


class CheckResult(PlainReadSchema):
    ok: bool = Field(description="Whether the remote side was reached with these credentials.")
    detail: str | None = Field(description="Why not, in the connector's words; null when ok.")
    field: str | None = Field(description="The connection field at fault, when one is.")
    checked_at: datetime
