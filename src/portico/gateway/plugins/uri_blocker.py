"""uri-blocker: refuse requests whose normalised path matches one of ``block_rules``.

The path is matched after percent-decoding and resolving ``..`` and ``//``, so encodings
cannot slip past a rule.
"""

from __future__ import annotations

from pydantic import Field

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
