"""ai-prompt-template's configuration (pydantic models, kept out of the compiled ``runtime``:
see CONVENTIONS.md "Compiled modules")."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from portico.core.validation import invalid
from portico.gateway.plugins.base import PluginConfig


class TemplateMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    role: Literal["system", "user", "assistant"] = Field(description="Author of the message.")
    content: str = Field(
        min_length=1,
        max_length=65_536,
        description="Text of the message; {{name}} placeholders are filled from the request.",
    )


class TemplateBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    model: str = Field(min_length=1, max_length=256, description="Model the request is for.")
    messages: list[TemplateMessage] = Field(
        min_length=1, max_length=100, description="The chat messages, in order."
    )


class PromptTemplate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(
        min_length=1,
        max_length=128,
        description="Name a request gives to pick this template; unique in the list.",
    )
    template: TemplateBody = Field(description="The chat request this template produces.")


class AiPromptTemplateConfig(PluginConfig):
    templates: list[PromptTemplate] = Field(
        min_length=1, max_length=100, description="The templates a request may name."
    )

    @model_validator(mode="after")
    def _unique_names(self) -> Self:
        # a repeated name would make the second template unreachable
        seen: set[str] = set()
        for index, entry in enumerate(self.templates):
            if entry.name in seen:
                invalid(
                    ("templates", index, "name"),
                    f'duplicate template name "{entry.name}"',
                    entry.name,
                )
            seen.add(entry.name)
        return self
