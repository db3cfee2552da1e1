"""ai-prompt-guard's per-request work, compiled with the data plane (``portico.native``).

Apart from ``config``, which holds the plugin's pydantic model (see CONVENTIONS.md "Compiled
modules"); it reads its settings through ``AiPromptGuardSettings`` once, when the route's
chain is built.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from portico.gateway.context import Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._ai_chat import chat_now, chat_request, message_text

#: a compiled pattern's bound ``search``
Search = Callable[[str], re.Match[str] | None]

#: a backslash that may stand for a character outside ASCII (``\u``, ``\x``, ``\N``, octal),
#: or ``\s``/``\S``, which in Unicode also match ASCII's ``\x1c``-``\x1f``
_WIDER_IN_UNICODE: Final = re.compile(r"\\[sSuUxN0-9]")


def ascii_search(pattern: str, search: Search) -> Search:
    """The search to run on ASCII text: ``pattern`` compiled with ``re.ASCII`` when that finds
    exactly what the Unicode pattern (``search``) finds in any ASCII text, else ``search``.
    On ASCII text the two differ only where the pattern itself reaches outside ASCII (its
    characters, its escapes: case folding brings them to ASCII letters, ``ſ`` to ``s``) or in
    ``\\s``; ASCII case folding and word boundaries are cheaper (measured with callgrind: the
    bench's five patterns over a prompt of 49 characters, about 28% fewer instructions)."""
    if not pattern.isascii() or _WIDER_IN_UNICODE.search(pattern) is not None:
        return search
    try:
        return re.compile(pattern, re.ASCII).search
    except (re.error, ValueError):  # ``(?u)`` in the pattern: Unicode it is
        return search


class AiPromptGuardSettings(Protocol):
    """What the runtime reads of ``config.AiPromptGuardConfig``."""

    @property
    def match_all_roles(self) -> bool: ...

    @property
    def match_all_conversation_history(self) -> bool: ...

    @property
    def allow_patterns(self) -> Sequence[str]: ...

    @property
    def deny_patterns(self) -> Sequence[str]: ...


class AiPromptGuardRuntime(BasePluginRuntime):
    """Checks the chat request's messages against the patterns (compiled once per
    configuration): every checked message must match an allow pattern (when there are any)
    and none of the deny patterns, else 400. Which messages: the last one, or the whole
    conversation (``match_all_conversation_history``); of every role, or only the user's
    (``match_all_roles``). APISIX's ai-prompt-guard, with its messages."""

    def __init__(self, config: AiPromptGuardSettings, services: RuntimeServices) -> None:
        self.all_roles = config.match_all_roles
        self.whole_history = config.match_all_conversation_history
        # the bound ``search`` of each pattern, looped over plainly: ``any(<generator>)``
        # costs more than the search of a short prompt
        self.allow: list[Search] = [re.compile(p).search for p in config.allow_patterns]
        self.deny: list[Search] = [re.compile(p).search for p in config.deny_patterns]
        # the same searches for ASCII text (``str.isascii`` is a flag, not a scan)
        self.allow_ascii = [
            ascii_search(p, s) for p, s in zip(config.allow_patterns, self.allow, strict=True)
        ]
        self.deny_ascii = [
            ascii_search(p, s) for p, s in zip(config.deny_patterns, self.deny, strict=True)
        ]

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
        ascii_text = text.isascii()
        if self.allow:
            allowed = False
            for search in self.allow_ascii if ascii_text else self.allow:
                if search(text) is not None:
                    allowed = True
                    break
            if not allowed:
                return Reply.error(400, "Request doesn't match allow patterns")
        for search in self.deny_ascii if ascii_text else self.deny:
            if search(text) is not None:
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
        texts: list[str] = []
        for message in chosen:
            # the role first: the text of a message that is not checked is never built
            if isinstance(message, dict) and (self.all_roles or message.get("role") == "user"):
                texts.append(message_text(message.get("content")))
        return texts
