"""What the plugins make of an answer, the gateway's own (a plugin's ``Reply``) or the node's
(``on_response_of``, what the proxy calls with it): the headers they set, their header filters,
their body filters."""

from __future__ import annotations

from typing import cast

from portico.gateway.context import (
    PluginRuntime,
    Reply,
    RequestContext,
    ResponseHeaders,
    ResponsePhase,
)
from portico.gateway.http.errors import AnswerReplaced
from portico.gateway.http.proxy import (
    AddedHeaders,
    BodyTransform,
    LineRelay,
    OnResponse,
    with_added,
)
from portico.gateway.http.server import Request, Responder
from portico.gateway.http.upstream import UpstreamResponse


def request_bytes_of(request: Request) -> int:
    return request.body.received


def body_transform(ctx: RequestContext) -> BodyTransform:
    """The context's body filters as one ``(chunk, last) → bytes`` for the proxy."""
    filters = list(ctx.body_filters)

    def transform(chunk: bytes, last: bool) -> bytes:
        for body_filter in filters:
            chunk = body_filter(ctx, chunk, last)
        return chunk

    return transform


def filter_headers(
    filters: list[PluginRuntime],
    ctx: RequestContext,
    status: int,
    headers: list[tuple[str, str]],
    *,
    lower_case: bool,
) -> list[tuple[str, str]]:
    """The response's headers: those the plugins set (``ctx.response_headers``), then
    every header filter's edits. The request id set last is also the responder's tag: it is
    here for what the filters and loggers see. With no filter to see them, the headers are
    merged as they are."""
    added = ctx._response_headers
    if not filters:
        if not added:
            return headers
        pairs = [(name.lower(), value) for name, value in added.items()]
        return with_added(headers, pairs, lower_case=lower_case)
    seen = ResponseHeaders(headers, lower_case=lower_case)
    if added:
        seen.update(added)
    for plugin in filters:
        plugin.header_filter(ctx, status, seen)
    if ctx.request_id_in_response:
        seen[ctx.request_id_header] = ctx.request_id
    return seen.items()


def send_reply(
    phase: ResponsePhase,
    ctx: RequestContext,
    reply: Reply,
    responder: Responder,
) -> None:
    ctx.status = reply.status
    headers = filter_headers(phase.filters, ctx, reply.status, reply.headers, lower_case=False)
    body = reply.body
    try:
        for body_filter in ctx._body_filters or ():
            body = body_filter(ctx, body, True)
    except AnswerReplaced as replaced:  # (as on the node's answers: see http.relaying)
        ctx.status = replaced.status
        headers = replaced.headers
        body = replaced.body
    responder.send(ctx.status, headers, body)  # a header filter may change it
    ctx.request_bytes = request_bytes_of(ctx.request)
    ctx.response_bytes = len(body)


def on_response_of(phase: ResponsePhase, ctx: RequestContext) -> OnResponse | LineRelay | None:
    """What the proxy calls with the upstream's answer: None when nothing rewrites it (the
    responder tags it with the request id; ``upstream_request.account`` notes the status)."""
    filters = phase.filters
    if phase.observed_only:
        # one per chain, told each request's context by the forwarding (its ``subject``): an
        # object made and freed per request cost ~330 instructions
        observer = phase.observer
        if observer is None:
            observer = phase.observer = ObservedAnswer(filters)
        return observer
    if not filters:
        added = ctx._response_headers
        if not added:
            return None
        if not ctx._body_filters:
            plain = AddedHeaders.of(added)  # (the usual answer keeps its lines; see proxy)
            if plain is not None:
                return plain

    return _rewriting(filters, ctx)


def _rewriting(filters: list[PluginRuntime], ctx: RequestContext) -> OnResponse:
    """The ``OnResponse`` that runs the plugins' filters on the node's answer. (A function of
    its own: compiled, the names a closure captures are allocated on every call of the
    function that defines it, and most requests need none.)"""

    def on_response(
        response: UpstreamResponse, headers: list[tuple[str, str]]
    ) -> tuple[list[tuple[str, str]], BodyTransform | None]:
        return _filtered(filters, ctx, response, headers)

    return on_response


def _filtered(
    filters: list[PluginRuntime],
    ctx: RequestContext,
    response: UpstreamResponse,
    headers: list[tuple[str, str]],
) -> tuple[list[tuple[str, str]], BodyTransform | None]:
    """The node's answer through the plugins' header filters: the headers to send, and the
    body filters' transform if any."""
    ctx.status = response.status
    out = filter_headers(filters, ctx, response.status, headers, lower_case=True)
    # a header filter may change the status the client gets (response-rewrite); the
    # proxy sends response.status, and judges the node by the status it answered
    response.status = ctx.status
    return out, body_transform(ctx) if ctx._body_filters else None


class ObservedAnswer(LineRelay):
    """The ``LineRelay`` of a chain whose header filters only read the head
    (``ResponsePhase.observed_only``), one per chain: the usual answer is relayed as the node
    wrote it (with the lines of headers a plugin set after them) and its head kept on
    ``ctx.response_head`` for the observers, their ``header_filter`` not called; an answer
    whose head has to be taken apart goes through the filters as with any other chain. The
    subject it is told is the request's context (``upstream_request.forwarding_of``)."""

    __slots__ = ("_filters",)

    def __init__(self, filters: list[PluginRuntime]) -> None:
        self._filters = filters

    def filtered(
        self, subject: object, response: UpstreamResponse, headers: list[tuple[str, str]]
    ) -> tuple[list[tuple[str, str]], BodyTransform | None]:
        return _filtered(self._filters, cast(RequestContext, subject), response, headers)

    def lines_after(
        self, subject: object, response: UpstreamResponse, tag: tuple[str, str] | None
    ) -> list[bytes] | None:
        ctx = cast(RequestContext, subject)
        if ctx._body_filters:  # (an access phase may have added one)
            return None
        added = ctx._response_headers
        if not added:
            ctx.keep_relayed_head(response.lines, None, tag)
            return response.lines
        plain = AddedHeaders.of(added)
        if plain is None:
            return None
        lines = plain.lines_after(ctx, response, tag)
        if lines is not None:
            ctx.keep_relayed_head(response.lines, plain.pairs, tag)
        return lines
