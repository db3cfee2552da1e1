"""The chat request (OpenAI's ``/chat/completions`` body) as the AI plugins share it: read and
parsed once per request, kept in ``ctx.vars``, and put back as the body the upstream gets
when a plugin changed it (ai-prompt-template fills it, ai-proxy sets the model)."""

from __future__ import annotations

import json
from _json import make_encoder
from collections.abc import Callable
from typing import Any, Final

from portico.gateway.context import Reply, RequestContext
from portico.gateway.http.body import RequestBody
from portico.gateway.http.errors import ClientError

#: ``ctx.vars`` key of the parsed request body (a dict)
CHAT: Final = "ai.chat"
#: ``ctx.vars`` key set by ai-rate-limiting: ask a streaming provider for its usage report
WANTS_USAGE: Final = "ai.wants_usage"

# made once: ``json.dumps`` with options builds an encoder per call, and ``json.loads`` of
# bytes first sniffs their encoding (a few microseconds a request between them)
_DECODER: Final = json.JSONDecoder()
_DECODE: Final = _DECODER.decode
#: the decoder's own C scanner, called without ``decode``'s two whitespace matches around it
#: (measured: 1.5 us instead of 2.2 for a chat body of 190 bytes)
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = _DECODER.scan_once  # type: ignore[attr-defined]
#: the C encoder ``JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode`` makes anew
#: on each call, made once; without its check for circular references: a chat body is parsed
#: JSON and the strings and dicts plugins put in, a tree. ``_encode`` writes the objects,
#: arrays and strings itself and leaves it the rest (numbers, anything unusual)
_ENCODER: Final = make_encoder(
    None,
    json.JSONEncoder().default,
    json.encoder.encode_basestring,
    None,
    ":",
    ",",
    False,
    False,
    True,
)


#: the C function the encoder writes each string with (quoted, escaped, not ASCII-only)
_quoted: Final[Callable[[str], str]] = json.encoder.encode_basestring
#: the usual keys of a chat body, quoted once (a dict lookup costs less than the escaping)
_QUOTED_KEYS: Final = {
    key: _quoted(key)
    for key in (
        "model",
        "messages",
        "role",
        "content",
        "name",
        "type",
        "text",
        "stream",
        "stream_options",
        "include_usage",
        "temperature",
        "top_p",
        "max_tokens",
        "stop",
        "user",
        "tools",
        "tool_calls",
        "tool_choice",
        "response_format",
    )
}


class _NotPlain(Exception):
    """A key ``_encode`` leaves to the C encoder (not a string: JSON writes it as one)."""


def _encode(chat: dict[str, Any]) -> str:
    """``json.dumps(chat, ensure_ascii=False, separators=(",", ":"))``: written here, compiled,
    into one list of pieces (measured with callgrind: 14.7k instructions instead of the C
    encoder's 18.7k for the bench's body of 190 bytes; the strings' escaping, 4.9k, is the
    same function)."""
    parts: list[str] = []
    try:
        _write_object(chat, parts)
    except _NotPlain:
        return "".join(_ENCODER(chat, 0))
    return "".join(parts)


def _write_object(value: dict[Any, Any], parts: list[str]) -> None:
    parts.append("{")
    first = True
    for key, item in value.items():
        if not isinstance(key, str):
            raise _NotPlain
        if first:
            first = False
        else:
            parts.append(",")
        quoted = _QUOTED_KEYS.get(key)
        parts.append(quoted if quoted is not None else _quoted(key))
        parts.append(":")
        _write(item, parts)
    parts.append("}")


def _write(value: object, parts: list[str]) -> None:
    # the C encoder's order of checks (a str or dict subclass is written as its base)
    if isinstance(value, str):
        parts.append(_quoted(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, dict):
        _write_object(value, parts)
    elif isinstance(value, list):
        parts.append("[")
        first = True
        for item in value:
            if first:
                first = False
            else:
                parts.append(",")
            _write(item, parts)
        parts.append("]")
    else:  # numbers (NaN and infinities as json.dumps writes them), tuples, the unknown
        parts.append("".join(_ENCODER(value, 0)))


def chat_now(ctx: RequestContext) -> dict[str, Any] | Reply | None:
    """``chat_request`` without waiting: None when the body has not all arrived yet (a
    plugin's ``access`` then goes on in a coroutine; most chat bodies come with the head)."""
    found = ctx.vars.get(CHAT)
    if found is not None:
        return found  # type: ignore[no-any-return]
    raw = ctx.request.body.peek_complete()
    return None if raw is None else _parsed(ctx, raw)


async def chat_request(ctx: RequestContext) -> dict[str, Any] | Reply:
    """The request's JSON object, or the 400 that says it is not one."""
    found = ctx.vars.get(CHAT)
    if found is not None:
        return found  # type: ignore[no-any-return]
    body = ctx.request.body
    # usually in by now: the head is handled before the parser feeds the body that came
    # with it, so ``access`` waits here; a complete body is taken without the async read
    raw = body.peek_complete()
    if raw is None:
        try:
            raw = await body.read()
        except ClientError as error:
            return Reply.error(error.status, str(error) or "cannot read the request body")
    return _parsed(ctx, raw)


def _parsed(ctx: RequestContext, raw: bytes) -> dict[str, Any] | Reply:
    try:
        parsed = _loads(raw) if raw else None
    except (ValueError, RecursionError):
        return Reply.error(400, "request body is not valid JSON")
    if not isinstance(parsed, dict):
        return Reply.error(400, "request body must be a JSON object")
    ctx.vars[CHAT] = parsed
    return parsed


def _loads(raw: bytes) -> Any:
    """``json.loads(raw)``: UTF-8 decoded at once when the body starts as a UTF-8 object
    does (``{``, then no NUL: not UTF-16/32, no BOM); any other start goes through
    ``json.loads``' own detection, so every body parses as it always did (surrogates
    included: ``json.loads`` decodes with ``surrogatepass`` too)."""
    if raw[0] == 0x7B and raw[1:2] != b"\x00":
        text = raw.decode("utf-8", "surrogatepass")
        try:
            found, end = _SCAN(text, 0)
        except StopIteration:
            end = -1
        if end == len(text):
            return found
        return _DECODE(text)  # something after the object: decode says what (or skips blanks)
    return json.loads(raw)


def replace_body(ctx: RequestContext, chat: dict[str, Any]) -> None:
    """Send ``chat`` upstream instead of the body the client sent (JSON-encoded here, so any
    value a plugin put in is escaped correctly)."""
    set_body(ctx, chat, _encode(chat).encode())


def set_body(ctx: RequestContext, chat: dict[str, Any], data: bytes) -> None:
    """``replace_body`` with ``data`` already encoded (``chat`` as JSON, as ``replace_body``
    would encode it)."""
    request = ctx.request
    request.body.discard()  # (what ``read`` kept of the client's body)
    body = RequestBody(None, chunked=False, expect_continue=False)
    body.feed(data)
    request.body = body
    request.content_length = len(data)
    ctx.upstream_headers["content-type"] = "application/json"
    ctx.vars[CHAT] = chat


def message_text(content: object) -> str:
    """The text of a message's ``content``: a string, or OpenAI's list of parts (the text of
    its ``text`` parts, one per line)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        return "\n".join(texts)
    return ""
