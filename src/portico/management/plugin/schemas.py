from __future__ import annotations

from typing import Any

from pydantic import Field

from portico.core.schema import ReadSchema


class PluginSchemaRead(ReadSchema):
    name: str = Field(description="Public name; case-sensitive.")
    category: str
    order: int = Field(description="Default execution order; lower runs first.")
    reorderable: bool = Field(description="Whether an attachment may set `_meta.order`.")
    description: str
    schema_: dict[str, Any] = Field(alias="schema", description="JSON Schema of the config.")
    consumer_schema: dict[str, Any] | None = Field(
        description="JSON Schema of the credential a consumer holds (authentication plugins)."
    )
    required: list[str] = Field(description="Config properties that must be given.")


class PluginSchemaPage(ReadSchema):
    items: list[PluginSchemaRead]
    page: int
    size: int
    total: int


class GlobalPluginRead(ReadSchema):
    name: str
    category: str
    order: int = Field(description="Effective order of this attachment.")
    config: dict[str, Any] = Field(description="As stored (what was sent).")


class GlobalPluginList(ReadSchema):
    items: list[GlobalPluginRead]
    config_version: int = Field(description="The environment's current config version.")


class GlobalPluginChange(GlobalPluginRead):
    config_version: int = Field(description="The config version this change produced.")
