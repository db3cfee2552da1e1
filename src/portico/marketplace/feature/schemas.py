"""HTTP shapes of portal features (snake_case)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from portico.core.schema import PlainReadSchema, PlainWriteSchema
from portico.core.validation import invalid
from portico.marketplace.feature.models import Feature
from portico.marketplace.feature.registry import DeclaredFeature

CONFIG_DESCRIPTION = (
    "The feature's settings as a whole (they replace the current ones), valid against its "
    "`settings_schema`; a feature without one takes `{}` only."
)


class FeatureRead(PlainReadSchema):
    key: str = Field(description="The module the feature stands for, e.g. `gateway_sync`.")
    label: str
    enabled: bool = Field(description="The platform-wide state.")
    config: dict[str, Any] = Field(description="The feature's settings.")
    installed: bool = Field(
        description="Whether its module is installed; a feature whose module was removed "
        "keeps its state and overrides until the module comes back."
    )
    switchable: bool = Field(description="False for the features that are always on.")
    always_on: str | None = Field(description="Why it can never be switched off, when so.")
    settings_schema: dict[str, Any] | None = Field(
        description="The JSON schema of `config`; null: it takes no settings."
    )
    removed_at: datetime | None = Field(description="When a sync found its module gone.")
    created_at: datetime = Field(description="When a sync first registered it.")
    updated_at: datetime

    @classmethod
    def of(cls, feature: Feature, declared: DeclaredFeature | None) -> FeatureRead:
        """``declared``: what its installed module says of it (None once it is removed)."""
        return cls(
            key=feature.key,
            label=feature.label,
            enabled=feature.enabled,
            config=dict(feature.config),
            installed=feature.removed_at is None,
            switchable=declared is None or declared.switchable,
            always_on=declared.always_on if declared else None,
            settings_schema=(
                declared.settings.model_json_schema() if declared and declared.settings else None
            ),
            removed_at=feature.removed_at,
            created_at=feature.created_at,
            updated_at=feature.updated_at,
        )


def _without_nulls(schema: dict[str, Any]) -> None:
    """The body as the model checks it: at least one field, neither of them null (the
    model's ``None`` only means "left out")."""
    properties = schema["properties"]
    for name, kind in (("enabled", "boolean"), ("config", "object")):
        properties[name] = {
            "type": kind,
            "title": properties[name].get("title"),
            "description": properties[name].get("description"),
        }
    schema["minProperties"] = 1


class FeatureUpdate(PlainWriteSchema):
    """What ``PATCH /features/{feature_key}`` changes: ``enabled``, ``config`` or both (a
    field left out keeps its value; null is not a value of either)."""

    model_config = ConfigDict(json_schema_extra=_without_nulls)

    enabled: bool | None = Field(
        default=None, description="Switch the feature on or off platform-wide."
    )
    config: dict[str, Any] | None = Field(default=None, description=CONFIG_DESCRIPTION)

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name in ("enabled", "config"):
                if name in data and data[name] is None:
                    invalid((name,), "must not be null; leave it out to keep its value")
        return data

    @model_validator(mode="after")
    def _something(self) -> FeatureUpdate:
        if self.enabled is None and self.config is None:
            raise ValueError("give `enabled`, `config` or both")
        return self


class SyncReport(PlainReadSchema):
    added: list[str] = Field(description="Features of newly installed modules, registered on.")
    removed: list[str] = Field(description="Features whose module is no longer installed.")
    restored: list[str] = Field(description="Removed features whose module is back.")
    features: list[FeatureRead] = Field(description="The registry after the sync.")


class OrganisationFeatureRead(PlainReadSchema):
    key: str
    label: str
    installed: bool
    enabled: bool = Field(
        description="The effective state: the override if set, else the platform's."
    )
    source: Literal["override", "platform"] = Field(description="Where `enabled` comes from.")
    platform_enabled: bool = Field(description="The platform-wide state.")
    override: bool | None = Field(description="The organisation's override; null when none.")

    @classmethod
    def of(cls, feature: Feature, override: bool | None) -> OrganisationFeatureRead:
        return cls(
            key=feature.key,
            label=feature.label,
            installed=feature.removed_at is None,
            enabled=feature.enabled if override is None else override,
            source="platform" if override is None else "override",
            platform_enabled=feature.enabled,
            override=override,
        )


class OverrideWrite(PlainWriteSchema):
    """``{"enabled": true|false}`` sets the organisation's override; ``{"enabled": null}``
    clears it (the platform state applies again)."""

    enabled: bool | None = Field(
        description="The organisation's own state of the feature; null clears the override."
    )
