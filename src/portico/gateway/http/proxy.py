"""Forwarding one request to an upstream node in a coroutine (``forward``), and the names of the
proxy step for its users.

What the upstream receives and how each failure is answered are decided by ``forwarding``
(its table and its request head), for this path and for ``callback_forward.forward_now``, the
same exchange for a request without a body (or with a small one already received) on an idle
pooled connection, driven by the connections' callbacks instead of a task. The answer is
relayed by ``relaying``.

Connect failures are retried on the next target (``Forwarding.retries`` times); nothing else
is retried (a request may have reached the node). A failure after the response has started
closes the client connection so the client sees a truncated response.

If the client goes away while the node has not answered yet, the exchange is abandoned (the
upstream connection is dropped, nginx's ``proxy_ignore_client_abort off``) and the result is 499.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Callable
from typing import NamedTuple, Protocol

from .callback_forward import SMALL_BODY, Outcome, forward_now
from .errors import ClientError, ConnectFailed, UpstreamError
from .forwarding import (
    ANSWERS,
    BodyTransform,
    FailureKind,
    Forwarding,
    LineRelay,
    OnResponse,
    ProxyResult,
    answer_failure,
    describe,
    failure_of,
    framing,
    request_head,
)
from .relaying import (
    AddedHeaders,
    relay_answer,
    response_headers,
    tunnel_answer,
    with_added,
)
from .responder import Responder
from .server import Request
from .upstream import UpstreamPool, UpstreamResponse

__all__ = [
    "SMALL_BODY",
    "AddedHeaders",
    "BodyTransform",
    "Endpoint",
    "Forwarding",
    "LineRelay",
    "OnResponse",
    "Outcome",
    "ProxyResult",
    "Target",
    "forward",
    "forward_now",
    "node_address",
    "response_headers",
    "with_added",
]


def node_address(host: str, port: int) -> str:
    """``host:port`` (IPv6 in brackets), as nginx's ``$upstream_addr`` writes it."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class Endpoint(Protocol):
    """Where one attempt goes: a ``Target``, or the balancer's node itself."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def address(self) -> str:
        """``host:port`` (IPv6 in brackets), as nginx's ``$upstream_addr`` writes it."""
        ...


class Target(NamedTuple):
    host: str
    port: int

    @property
    def address(self) -> str:
        return node_address(self.host, self.port)


async def forward(
    request: Request,
    responder: Responder,
    forwarding: Forwarding,
    *,
    pool: UpstreamPool,
    targets: Callable[[], Endpoint | None],
) -> ProxyResult:
    """Forward ``request`` to the first node of ``targets`` that takes a connection (see the
    module docstring) and relay the answer; the result of the request."""
    loop = responder.loop
    started = loop.time()
    body: AsyncIterable[bytes] | bytes | None
    content_length = request.content_length
    if content_length is None and not request.body.chunked:
        body = None
    else:
        body = request.body.take_complete()  # a small body that is already here: one write
        if body is None:
            body = request.body
    head = request_head(request, forwarding, framing(body, content_length))
    tried: list[str] = []
    task = asyncio.current_task(loop)
    assert task is not None
    response: UpstreamResponse | None = None
    failure: FailureKind | None = None
    error: str | None = None
    cancelled = False
    attempt = 0
    # While waiting for the node, a client that goes away cancels the wait (see docstring).
    responder.on_disconnect(task.cancel)
    try:
        while True:
            node = targets()
            if node is None:
                if not tried:
                    failure, error = FailureKind.NO_NODE, "no upstream node available"
                break
            tried.append(node.address)
            try:
                response = await pool.request(
                    node.host,
                    node.port,
                    request.method,
                    head,
                    body,
                    content_length,
                    forwarding.timeouts,
                    forwarding.tls,
                    forwarding.server_name,
                    forwarding.keepalive,
                )
                break
            except ConnectFailed as failed:
                failure, error = failure_of(failed), describe(failed)
                if attempt < forwarding.retries:
                    attempt += 1
                    continue  # (no node left: the last failure stands)
                break
    except asyncio.CancelledError:
        if not responder.disconnected:
            raise
        cancelled = True
        task.uncancel()
        failure, error = FailureKind.CLIENT_GONE, "client disconnected"
    # (one name per clause: see CONVENTIONS.md "Compiled modules")
    except (UpstreamError, ClientError) as exchange_failed:
        failure, error = failure_of(exchange_failed), describe(exchange_failed)
    finally:
        responder.on_disconnect(None)
    if responder.disconnected and not cancelled:
        # Our cancel was requested but not delivered yet: take it here, not in the caller.
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            task.uncancel()
        if response is not None:
            response.close()
            response = None
        failure, error = FailureKind.CLIENT_GONE, "client disconnected"

    upstream_addr = ", ".join(tried) if tried else None
    if response is None:
        assert failure is not None  # (no answer without a failure)
        row = ANSWERS[failure]
        answer_failure(responder, failure)
        return ProxyResult(
            row.status,
            upstream_addr,
            loop.time() - started,
            request.body.received,
            0,
            error,
            row.blame,
        )
    if response.upgraded:
        return await tunnel_answer(
            request, responder, response, forwarding.timeouts, upstream_addr, started
        )
    return await relay_answer(responder, response, forwarding, upstream_addr, started, request)
