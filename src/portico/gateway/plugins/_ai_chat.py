"""The chat request (OpenAI's ``/chat/completions`` body) as the AI plugins share it: read and
parsed once per request, kept in ``ctx.vars``, and put back as the body the upstream gets
when a plugin changed it (ai-prompt-template fills it, ai-proxy sets the model)."""

from __future__ import annotations

import json
from typing import Any, Final

from portico.gateway.context import Reply, RequestContext
from portico.gateway.http.body import RequestBody
from portico.gateway.http.errors import ClientError

#: ``ctx.vars`` key of the parsed request body (a dict)
CHAT: Final = "ai.chat"
#: ``ctx.vars`` key set by ai-rate-limiting: ask a streaming provider for its usage report
WANTS_USAGE: Final = "ai.wants_usage"


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
    try:
        raw = await ctx.request.body.read()
    except ClientError as error:
        return Reply.error(error.status, str(error) or "cannot read the request body")
    return _parsed(ctx, raw)


def _parsed(ctx: RequestContext, raw: bytes) -> dict[str, Any] | Reply:
    try:
        parsed = json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        return Reply.error(400, "request body is not valid JSON")
    if not isinstance(parsed, dict):
        return Reply.error(400, "request body must be a JSON object")
    ctx.vars[CHAT] = parsed
    return parsed


def replace_body(ctx: RequestContext, chat: dict[str, Any]) -> None:
    """Send ``chat`` upstream instead of the body the client sent (JSON-encoded here, so any
    value a plugin put in is escaped correctly)."""
    data = json.dumps(chat, ensure_ascii=False, separators=(",", ":")).encode()
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
