"""ai-prompt-guard's configuration (a pydantic model, kept out of the compiled ``runtime``: see
CONVENTIONS.md "Compiled modules")."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from portico.gateway.plugins.base import PluginConfig, Regex


class AiPromptGuardConfig(PluginConfig):
    match_all_roles: bool = Field(
        False,
        description="Check the messages of every role; false checks only when the last "
        "message is the user's.",
    )
    match_all_conversation_history: bool = Field(
        False,
        description="Check the whole conversation; false checks only the last message.",
    )
    allow_patterns: list[Regex] = Field(
        default_factory=list,
        max_length=100,
        description="Regular expressions of which the checked content must match one; "
        "empty allows everything not denied.",
    )
    deny_patterns: list[Regex] = Field(
        default_factory=list,
        max_length=100,
        description="Regular expressions none of which the checked content may match.",
    )

    @model_validator(mode="after")
    def _guards_something(self) -> Self:
        # with both lists empty the plugin would let every prompt through: a mistake
        if not self.allow_patterns and not self.deny_patterns:
            raise ValueError("at least one of allow_patterns or deny_patterns must be non-empty")
        return self
