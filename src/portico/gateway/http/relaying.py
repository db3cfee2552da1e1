"""Relaying a node's answer to the client, for both forwarding paths (``proxy.forward``, a
coroutine, and ``callback_forward``, callbacks): the head as the node wrote it or rewritten
by ``OnResponse``, the body streamed with back-pressure on both sides, or the connection
handed over to a tunnel after a 101.

The usual answer's header lines are relayed as they came (``Responder.start_lines``); headers
a plugin only sets follow them (``AddedHeaders``), and plugins that only read the head get it
as relayed (``LineRelay``); anything else takes the headers apart.
A failure while relaying is answered by the table of ``forwarding``.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Final

from .errors import AnswerReplaced, ClientDisconnected, UpstreamError
from .forwarding import (
    ANSWERS,
    BodyTransform,
    FailureKind,
    Forwarding,
    LineRelay,
    ProxyResult,
    answer_failure,
    describe,
    upstream_failure,
)
from .names import connection_tokens
from .request import Request
from .responder import Responder
from .response_lines import name_size_bit
from .tunnel import relay
from .upstream import Timeouts, UpstreamResponse

#: names plugins set on answers, checked and lower-cased once (a bounded memo: the names
#: come from plugin code and configuration, a handful)
_ADDED_NAMES: Final[dict[str, str]] = {}
_MAX_ADDED_NAMES: Final = 256


def with_added(
    headers: list[tuple[str, str]], pairs: list[tuple[str, str]], *, lower_case: bool = True
) -> list[tuple[str, str]]:
    """``headers`` with ``pairs`` (names lower-cased) set: those of the same names taken out,
    the pairs after the rest (``lower_case``: ``headers`` names are lower-cased already)."""
    replaced = {name for name, _ in pairs}
    if lower_case:
        kept = [h for h in headers if h[0] not in replaced]
    else:
        kept = [h for h in headers if h[0].lower() not in replaced]
    kept.extend(pairs)
    return kept


class AddedHeaders(LineRelay):
    """An ``OnResponse`` that only sets headers on the answer (``pairs``: names lower-cased),
    replacing the node's of the same names: the usual answer gets them as extra lines after
    the node's, which are relayed as they came (``_start_response``)."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    @staticmethod
    def of(headers: dict[str, str]) -> AddedHeaders | None:
        """For ``headers`` that can be written as they are (no line break in a name or value,
        the check ``Responder.start`` makes), else None (the general path refuses them)."""
        pairs: list[tuple[str, str]] = []
        for name, value in headers.items():
            key = _ADDED_NAMES.get(name)
            if key is None:
                if "\r" in name or "\n" in name:
                    return None
                key = name.lower()
                if len(_ADDED_NAMES) < _MAX_ADDED_NAMES:
                    _ADDED_NAMES[name] = key
            if "\r" in value or "\n" in value:
                return None
            pairs.append((key, value))
        return AddedHeaders(pairs)

    def filtered(
        self, subject: object, response: UpstreamResponse, headers: list[tuple[str, str]]
    ) -> tuple[list[tuple[str, str]], BodyTransform | None]:
        return with_added(headers, self.pairs), None

    def lines_after(
        self, subject: object, response: UpstreamResponse, tag: tuple[str, str] | None
    ) -> list[bytes] | None:
        """The node's lines and then the headers set, as lines (the pieces to join for the
        head: see ``Connection.lines``); None when the node sent one of them (it must be taken
        out: the caller takes the headers apart) or one is the responder's ``tag``."""
        lines = response.lines
        sizes = response.name_sizes
        head = b""
        out = lines.copy()
        for name, value in self.pairs:
            if tag is not None and name == tag[0]:
                return None
            if sizes & name_size_bit(len(name)):
                # a node's header has a name this long: is it this one? (one lower-cased copy
                # of the head, where each name follows a "\n")
                if not head:
                    head = b"\n" + b"".join(lines).lower()
                if head.find(f"\n{name}:".encode("latin-1")) >= 0:
                    return None
            out.append(f"{name}: {value}\r\n".encode("latin-1"))
        return out


def response_headers(response: UpstreamResponse) -> list[tuple[str, str]]:
    """The upstream's headers as the client gets them: the hop-by-hop ones were left out as
    they were parsed (framing is redone per client); here also those its Connection names."""
    tokens = connection_tokens(response.connection)
    if tokens:
        return [h for h in response.headers if h[0] not in tokens]
    return response.headers


async def relay_answer(
    responder: Responder,
    response: UpstreamResponse,
    forwarding: Forwarding,
    upstream_addr: str | None,
    started: float,
    request: Request,
) -> ProxyResult:
    """Relay the answer (through ``forwarding.on_response``), its body streamed; the result
    of the request."""
    if response.complete is not None:
        return relay_complete(responder, response, forwarding, upstream_addr, started, request)
    error: str | None = None
    kind: str | None = None
    status = response.status
    try:
        transform = _start_response(responder, response, forwarding)
        await _stream(responder, response.body, transform)
    except BaseException as exc:
        status, error, kind = _relay_failed(exc, responder, response, status)
    return _relayed(responder, request, status, upstream_addr, started, error, kind)


def relay_complete(
    responder: Responder,
    response: UpstreamResponse,
    forwarding: Forwarding,
    upstream_addr: str | None,
    started: float,
    request: Request,
) -> ProxyResult:
    """``relay_answer`` for an answer whose whole body came with the head: one write, no
    wait."""
    error: str | None = None
    kind: str | None = None
    status = response.status
    complete = response.complete or b""
    try:
        transform = _start_response(responder, response, forwarding)
        responder.write_last(complete if transform is None else transform(complete, True))
    except BaseException as exc:
        status, error, kind = _relay_failed(exc, responder, response, status)
    return _relayed(responder, request, status, upstream_addr, started, error, kind)


def _relayed(
    responder: Responder,
    request: Request,
    status: int,
    upstream_addr: str | None,
    started: float,
    error: str | None,
    kind: str | None,
) -> ProxyResult:
    """The result of a relayed answer: the bytes are what the responder wrote."""
    return ProxyResult(
        status,
        upstream_addr,
        responder.loop.time() - started,
        request.body.received,
        responder.bytes_written,
        error,
        kind,
    )


def _start_response(
    responder: Responder, response: UpstreamResponse, forwarding: Forwarding
) -> BodyTransform | None:
    on_response = forwarding.on_response
    if connection_tokens(response.connection) is None and _tag_is_new(response, responder.tag):
        # the usual answer: its header lines relayed as they came, never taken apart
        if on_response is None:
            responder.start_lines(response.status, response.lines, response.content_length)
            return None
        if isinstance(on_response, LineRelay):
            lines = on_response.lines_after(forwarding.subject, response, responder.tag)
            if lines is not None:
                responder.start_lines(response.status, lines, response.content_length)
                return None
    if on_response is None:
        responder.start(response.status, response_headers(response), parsed=True)
        return None
    # (a filter may add headers)
    if isinstance(on_response, LineRelay):
        headers, transform = on_response.filtered(
            forwarding.subject, response, response_headers(response)
        )
    else:
        headers, transform = on_response(response, response_headers(response))
    responder.start(response.status, headers)
    return transform


def _tag_is_new(response: UpstreamResponse, tag: tuple[str, str] | None) -> bool:
    """Whether none of the node's header lines has the name of the responder's ``tag`` (which
    is written after them): the request id's header, ``x-request-id`` unless the route's
    request-id plugin names another."""
    if tag is None:
        return True
    name = tag[0]
    if name == "x-request-id":
        return not response.named_request_id  # (told apart as the head was parsed)
    if not response.name_sizes & name_size_bit(len(name)):
        return True
    head = b"\n" + b"".join(response.lines).lower()
    return head.find(f"\n{name}:".encode("latin-1")) < 0


def _relay_failed(
    exc: BaseException, responder: Responder, response: UpstreamResponse, status: int
) -> tuple[int, str, str | None]:
    """What a failure while relaying makes of the result: an upstream failure is answered by
    the table (before the first body byte, the head still held back; after it, a cut
    connection, the node's status kept); a client that went away is the client's doing; a
    body transform's ``AnswerReplaced`` sends its answer instead (the node answered: no
    blame, its status kept). Anything else is raised again (the upstream connection
    dropped)."""
    if isinstance(exc, AnswerReplaced):
        response.close()  # (the rest of a body not read to its end is not wanted)
        if responder.committed:  # a transform that released bytes first: cut it short
            responder.abort()
        else:
            if responder.started:
                responder.reset()
            responder.send(exc.status, exc.headers, exc.body)
        return status, exc.reason, None
    if isinstance(exc, UpstreamError):
        kind = upstream_failure(exc)
        sent = answer_failure(responder, kind)
        return sent or status, describe(exc), ANSWERS[kind].blame
    response.close()
    if isinstance(exc, ClientDisconnected):
        return status, "client disconnected", "client"
    raise exc


async def _stream(
    responder: Responder, body: AsyncIterable[bytes], transform: BodyTransform | None
) -> None:
    write = responder.write
    if transform is None:
        async for chunk in body:
            await write(chunk)
    else:
        async for chunk in body:
            out = transform(chunk, False)
            if out:
                await write(out)
        out = transform(b"", True)
        if out:
            await write(out)
    responder.end()


async def tunnel_answer(
    request: Request,
    responder: Responder,
    response: UpstreamResponse,
    timeouts: Timeouts,
    upstream_addr: str | None,
    started: float,
) -> ProxyResult:
    """After a 101: the client and node connections handed over to a byte tunnel (a 101 the
    client did not ask for is refused)."""
    loop = responder.loop
    if not request.upgrade or response.status != 101:
        response.close()
        kind = FailureKind.UNEXPECTED_UPGRADE
        status = answer_failure(responder, kind)
        return ProxyResult(
            status,
            upstream_addr,
            loop.time() - started,
            0,
            0,
            "unexpected upgrade from upstream",
            ANSWERS[kind].blame,
        )
    headers = response_headers(response)
    headers.append(("connection", "upgrade"))
    if response.upgrade is not None:
        headers.append(("upgrade", response.upgrade))
    responder.start(101, headers)
    client, client_pending = responder.detach()
    upstream, upstream_pending = response.detach()
    sent, received = await relay(
        client, client_pending, upstream, upstream_pending, idle_timeout=timeouts.read
    )
    return ProxyResult(101, upstream_addr, loop.time() - started, sent, received, None)
