"""consumer-restriction: admit (whitelist) or refuse (blacklist) authenticated consumers."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import ConfigDict, Field, model_validator

from portico.core.validation import invalid
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec

ConsumerName = Annotated[str, Field(min_length=1, max_length=256)]


class ConsumerRestrictionConfig(PluginConfig):
    # exactly one of the two lists, as APISIX's schema says; checked in _exactly_one_list
    model_config = ConfigDict(
        json_schema_extra={"oneOf": [{"required": ["whitelist"]}, {"required": ["blacklist"]}]}
    )

    whitelist: list[ConsumerName] | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="Only these consumers (by name) are admitted.",
    )
    blacklist: list[ConsumerName] | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="These consumers (by name) are refused; others admitted.",
    )
    rejected_code: int = Field(403, ge=200, le=599, description="Status of refused requests.")
    rejected_msg: str | None = Field(
        None, min_length=1, max_length=1024, description="Body of refused requests."
    )

    @model_validator(mode="after")
    def _exactly_one_list(self) -> Self:
        if self.whitelist is None and self.blacklist is None:
            invalid(("whitelist",), 'property "whitelist" or "blacklist" is required')
        if self.whitelist is not None and self.blacklist is not None:
            invalid(("blacklist",), '"whitelist" and "blacklist" are exclusive: give only one')
        return self


PLUGIN = PluginSpec(
    name="consumer-restriction",
    category=Category.SECURITY,
    order=150,
    reorderable=False,
    config=ConsumerRestrictionConfig,
    description="Admits only the whitelisted (or refuses the blacklisted) consumers, by name; "
    "refused → `rejected_code` (403).",
)
