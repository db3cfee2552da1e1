"""ai-prompt-template's per-request work, compiled with the data plane (``portico.native``).

Apart from ``config``, which holds the plugin's pydantic models (see CONVENTIONS.md
"Compiled modules"); it reads its templates through the settings protocols below once, when
the route's chain is built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from json.encoder import encode_basestring
from typing import Any, Final, Protocol

from portico.gateway.context import Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._ai_chat import chat_now, chat_request, set_body


class MessageSettings(Protocol):
    """What the runtime reads of ``config.TemplateMessage``."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


class TemplateBodySettings(Protocol):
    """What the runtime reads of ``config.TemplateBody``."""

    @property
    def model(self) -> str: ...

    @property
    def messages(self) -> Sequence[MessageSettings]: ...


class PromptTemplateSettings(Protocol):
    """What the runtime reads of ``config.PromptTemplate``."""

    @property
    def name(self) -> str: ...

    @property
    def template(self) -> TemplateBodySettings: ...


class AiPromptTemplateSettings(Protocol):
    """What the runtime reads of ``config.AiPromptTemplateConfig``."""

    @property
    def templates(self) -> Sequence[PromptTemplateSettings]: ...


#: ``{{name}}`` (spaces inside the braces allowed)
PLACEHOLDER: Final = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")


class FilledText:
    """A message's content split once into literal text and variable names (even and odd
    places), so that a request fills it without searching the template again."""

    __slots__ = ("names", "parts")

    def __init__(self, content: str) -> None:
        self.parts = PLACEHOLDER.split(content)
        self.names = self.parts[1::2]

    def fill(self, values: dict[str, str]) -> str:
        parts = self.parts
        if len(parts) == 1:
            return parts[0]
        out = list(parts)
        out[1::2] = [values[name] for name in self.names]
        return "".join(out)


class CompiledTemplate:
    """A template made ready for requests: its contents split (:class:`FilledText`), the
    variables it needs, and the JSON text around the contents, encoded once."""

    __slots__ = ("heads", "messages", "model", "names", "tails")

    def __init__(self, template: TemplateBodySettings) -> None:
        self.model = template.model
        self.messages = [(m.role, FilledText(m.content)) for m in template.messages]
        seen: dict[str, None] = {}  # (ordered: the first missing one is named)
        for _, text in self.messages:
            seen.update(dict.fromkeys(text.names))
        self.names = list(seen)
        # the body ``replace_body`` would encode, cut before each message's content: a
        # request then JSON-encodes only the filled contents (``encoded``)
        start = '{"model":' + encode_basestring(self.model) + ',"messages":['
        self.heads = [
            (start if index == 0 else "},") + '{"role":' + encode_basestring(role) + ',"content":'
            for index, (role, _) in enumerate(self.messages)
        ]
        self.tails = {None: "}]}", True: '}],"stream":true}', False: '}],"stream":false}'}

    def encoded(self, contents: list[str], stream: bool | None) -> bytes:
        """The JSON body of this template's chat request with these message ``contents``
        (and ``stream`` when not None): byte for byte what ``replace_body`` would send."""
        pieces: list[str] = []
        for head, content in zip(self.heads, contents, strict=True):
            pieces.append(head)
            pieces.append(encode_basestring(content))
        pieces.append(self.tails[stream])
        return "".join(pieces).encode()


def variable_text(value: object) -> str | None:
    """A variable's value as text: a string as it is, a number or boolean as JSON writes it;
    None for anything else (an object or a list is not a value to paste into a prompt)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


class AiPromptTemplateRuntime(BasePluginRuntime):
    """The request names a template (``template_name``) and gives its variables as the other
    fields of its JSON body (APISIX's shape); the upstream gets the template's chat request
    (``model``, ``messages``) with every ``{{name}}`` filled, and the client's ``stream``
    flag. The body is re-encoded as JSON,
    so a value's quotes, backslashes and line breaks cannot break out of its string. An
    unknown template or a missing variable is a 400 that names it."""

    def __init__(self, config: AiPromptTemplateSettings, services: RuntimeServices) -> None:
        self.templates = {t.name: CompiledTemplate(t.template) for t in config.templates}

    def access(self, ctx: RequestContext) -> Access:
        chat = chat_now(ctx)
        if chat is None:
            return self.access_later(ctx)  # the body is still coming
        if isinstance(chat, Reply):
            return chat
        return self.fill(ctx, chat)

    async def access_later(self, ctx: RequestContext) -> Reply | None:
        chat = await chat_request(ctx)
        return chat if isinstance(chat, Reply) else self.fill(ctx, chat)

    def fill(self, ctx: RequestContext, chat: dict[str, Any]) -> Reply | None:
        name = chat.get("template_name")
        if not isinstance(name, str):
            return Reply.error(400, 'property "template_name" is required')
        template = self.templates.get(name)
        if template is None:
            return Reply.error(400, f'template "{name}" is not defined')
        values: dict[str, str] = {}
        for variable in template.names:
            if variable not in chat:
                return Reply.error(400, f'template "{name}": variable "{variable}" is missing')
            text = variable_text(chat[variable])
            if text is None:
                message = f'template "{name}": variable "{variable}" must be a string or number'
                return Reply.error(400, message)
            values[variable] = text
        contents = [text.fill(values) for _, text in template.messages]
        filled: dict[str, Any] = {
            "model": template.model,
            "messages": [
                {"role": role, "content": content}
                for (role, _), content in zip(template.messages, contents, strict=True)
            ],
        }
        stream = chat.get("stream")
        if isinstance(stream, bool):  # the client may still ask for a stream
            filled["stream"] = stream
        else:
            stream = None
        set_body(ctx, filled, template.encoded(contents, stream))
        return None
