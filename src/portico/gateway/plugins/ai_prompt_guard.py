"""ai-prompt-guard: allow/deny regular expressions over the messages of a chat request → 400."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Self

from pydantic import Field, model_validator

from portico.gateway.context import Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._ai_chat import chat_now, chat_request, message_text
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec, Regex


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


PLUGIN = PluginSpec(
    name="ai-prompt-guard",
    category=Category.AI,
    order=400,
    reorderable=True,
    config=AiPromptGuardConfig,
    description="Refuses (400) chat requests whose messages match a deny pattern or no "
    "allow pattern.",
)


class AiPromptGuardRuntime(BasePluginRuntime):
    """Checks the chat request's messages against the patterns (compiled once per
    configuration): every checked message must match an allow pattern (when there are any)
    and none of the deny patterns, else 400. Which messages: the last one, or the whole
    conversation (``match_all_conversation_history``); of every role, or only the user's
    (``match_all_roles``). APISIX's ai-prompt-guard, with its messages."""

    def __init__(self, config: AiPromptGuardConfig, services: RuntimeServices) -> None:
        self.all_roles = config.match_all_roles
        self.whole_history = config.match_all_conversation_history
        # the bound ``search`` of each pattern, looped over plainly: ``any(<generator>)``
        # costs more than the search of a short prompt
        self.allow = [re.compile(pattern).search for pattern in config.allow_patterns]
        self.deny = [re.compile(pattern).search for pattern in config.deny_patterns]

    def access(self, ctx: RequestContext) -> Access:
        chat = chat_now(ctx)
        if chat is None:
            return self.access_later(ctx)  # the body is still coming
        if isinstance(chat, Reply):
            return chat
        return self.verdict(chat)

    async def access_later(self, ctx: RequestContext) -> Reply | None:
        chat = await chat_request(ctx)
        return chat if isinstance(chat, Reply) else self.verdict(chat)

    def verdict(self, chat: dict[str, Any]) -> Reply | None:
        for text in self.checked(chat):
            refusal = self.refusal(text)
            if refusal is not None:
                return refusal
        return None

    def refusal(self, text: str) -> Reply | None:
        """The 400 for one checked text, or None when it passes."""
        if self.allow:
            for search in self.allow:
                if search(text):
                    break
            else:
                return Reply.error(400, "Request doesn't match allow patterns")
        for search in self.deny:
            if search(text):
                return Reply.error(400, "Request contains prohibited content")
        return None

    def checked(self, chat: dict[str, Any]) -> list[str]:
        """The texts the patterns apply to."""
        messages = chat.get("messages")
        if messages is None and "template_name" in chat:
            # a request for ai-prompt-template (which runs after the guard by default): its
            # variables are what the client wrote into the prompt
            return [v for k, v in chat.items() if k != "template_name" and isinstance(v, str)]
        if not isinstance(messages, list) or not messages:
            return []
        chosen = messages if self.whole_history else messages[-1:]
        return [
            message_text(message.get("content"))
            for message in chosen
            if isinstance(message, dict) and (self.all_roles or message.get("role") == "user")
        ]


PLUGIN = dataclasses.replace(PLUGIN, runtime=AiPromptGuardRuntime)
