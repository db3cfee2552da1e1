"""consumer-restriction: admit (whitelist) or refuse (blacklist) authenticated consumers."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Self

from pydantic import ConfigDict, Field, model_validator

from portico.core.validation import invalid
from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
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


class ConsumerRestrictionRuntime(BasePluginRuntime):
    """Runs after authentication (order 150): no identified consumer → 401, as APISIX does,
    since there is nobody to admit; a refused one → ``rejected_code``."""

    def __init__(self, config: ConsumerRestrictionConfig, services: RuntimeServices) -> None:
        self.allow = config.whitelist is not None
        listed = config.whitelist if config.whitelist is not None else config.blacklist or []
        self.names = frozenset(listed)
        self.rejected_code = config.rejected_code
        self.message = config.rejected_msg or "The consumer_name is forbidden."

    def access(self, ctx: RequestContext) -> Reply | None:
        if ctx.consumer is None:
            return Reply.error(401, "Missing authentication or identity verification.")
        if (ctx.consumer.username in self.names) != self.allow:
            return Reply.error(self.rejected_code, self.message)
        return None


PLUGIN = dataclasses.replace(PLUGIN, runtime=ConsumerRestrictionRuntime)
