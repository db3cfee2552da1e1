"""uri-blocker: refuse requests whose normalised path matches one of ``block_rules``.

The path is matched after percent-decoding and resolving ``..`` and ``//``, so encodings
cannot slip past a rule.
"""

from __future__ import annotations

import dataclasses
import re

from pydantic import Field

from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec, Regex


class UriBlockerConfig(PluginConfig):
    block_rules: list[Regex] = Field(
        min_length=1,
        max_length=256,
        description="Regular expressions (Python syntax) searched in the normalised path.",
    )
    rejected_code: int = Field(403, ge=200, le=599, description="Status of blocked requests.")
    rejected_msg: str | None = Field(
        None, min_length=1, max_length=1024, description="Body of blocked requests."
    )
    case_insensitive: bool = Field(False, description="Match the rules ignoring case.")


PLUGIN = PluginSpec(
    name="uri-blocker",
    category=Category.SECURITY,
    order=20,
    reorderable=False,
    config=UriBlockerConfig,
    description="Blocks requests whose normalised path matches one of `block_rules`; "
    "blocked → `rejected_code` (403).",
)


class UriBlockerRuntime(BasePluginRuntime):
    """Matched against the normalised path (the router's), never the raw one."""

    def __init__(self, config: UriBlockerConfig, services: RuntimeServices) -> None:
        flags = re.IGNORECASE if config.case_insensitive else 0
        self.rules = re.compile("|".join(f"(?:{rule})" for rule in config.block_rules), flags)
        self.code = config.rejected_code
        self.message = config.rejected_msg

    def access(self, ctx: RequestContext) -> Reply | None:
        if self.rules.search(ctx.path) is None:
            return None
        if self.message is None:
            return Reply(self.code)
        return Reply.error(self.code, self.message)


PLUGIN = dataclasses.replace(PLUGIN, runtime=UriBlockerRuntime)
