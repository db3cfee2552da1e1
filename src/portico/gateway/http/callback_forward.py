"""Forwarding by callbacks: what production runs for a request that finds an idle pooled
connection to its node and has no body, or a small one already received (``forward_now``).

The request is written now and the answer handled by the connection's callbacks, no task
(resuming a coroutine for each step cost more than the rest of a small request). An answer
that streams or upgrades continues in a coroutine; a connection the node had closed while idle
(stale) sends the request again in one (``Outcome.again``) when it may be sent again
(``upstream.replayable``; a POST is not: 502, as on the coroutine path). Failures are answered
by the table of ``forwarding``, as on the coroutine path (``proxy.forward``).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Final

from .errors import StaleConnection
from .forwarding import (
    ANSWERS,
    FailureKind,
    Forwarding,
    ProxyResult,
    answer_failure,
    framing,
    request_head,
    upstream_failure,
)
from .relaying import relay_answer, relay_complete, tunnel_answer
from .request import Request
from .responder import Responder
from .upstream import UpstreamResponse, replayable, response_of
from .upstream_conn import Connection
from .upstream_contract import Listener

#: the largest request body sent by callbacks, with its head: one the socket takes at once (a
#: larger one is written in a coroutine, which waits for the socket under the send timeout)
SMALL_BODY: Final = 64 * 1024


class Outcome:
    """Who hears how a request forwarded by ``forward_now`` went (one object rather than two
    callbacks: compiled, each bound method passed would be allocated per request; a base
    class rather than a ``Protocol``, so that its methods are direct calls)."""

    __slots__ = ()

    def done(self, result: ProxyResult) -> None:
        """The result (from a callback, or from the coroutine the rest continued in)."""
        raise NotImplementedError

    def again(self) -> Coroutine[Any, Any, None]:
        """The coroutine that forwards the request again (the connection turned out to be
        stale)."""
        raise NotImplementedError


class Exchange(Listener):
    """One request on an idle pooled connection, driven by callbacks (see ``forward_now``).
    ``outcome`` gets the result; the handler is then finished (``finish``)."""

    __slots__ = (
        "_conn",
        "_forwarding",
        "_outcome",
        "_replayable",
        "_request",
        "_responder",
        "addr",
        "started",
    )

    def __init__(
        self,
        request: Request,
        responder: Responder,
        conn: Connection,
        addr: str,
        forwarding: Forwarding,
        outcome: Outcome,
        replayable: bool,
    ) -> None:
        self._request = request
        self._responder = responder
        self._conn = conn
        self.addr = addr
        self._forwarding = forwarding
        self._outcome = outcome
        self._replayable = replayable  # sent again if the connection turns out stale
        self.started = responder.loop.time()

    def on_upstream(self) -> None:
        """The connection's news: the head (maybe the whole answer), or a failure."""
        conn = self._conn
        responder = self._responder
        responder.on_disconnect(None)
        if not conn.head_done:
            failure = conn.failure()
            if isinstance(failure, StaleConnection) and self._replayable:
                # The node had closed the idle connection: the request goes again, as
                # ``UpstreamPool.request`` replays it.
                responder.defer(self._outcome.again())
                return
            kind = upstream_failure(failure)
            self._end(answer_failure(responder, kind), str(failure), ANSWERS[kind].blame)
            return
        forwarding = self._forwarding
        response = response_of(conn, forwarding.timeouts.read)
        if response.complete is None or response.upgraded:
            responder.defer(self._relay_later(response))
            return
        try:
            result = relay_complete(
                responder,
                response,
                forwarding,
                self.addr,
                self.started,
                self._request,
            )
        except Exception as exc:
            responder.finish(exc)
            return
        self._conclude(result)

    def client_left(self) -> None:
        """The client went away before the answer: the exchange is abandoned (499)."""
        conn = self._conn
        conn.listener = None
        conn.abort()
        kind = FailureKind.CLIENT_GONE
        self._end(ANSWERS[kind].status, "client disconnected", ANSWERS[kind].blame)

    def _end(self, status: int, error: str, blame: str) -> None:
        elapsed = self._responder.loop.time() - self.started
        sent = self._request.body.received
        self._conclude(ProxyResult(status, self.addr, elapsed, sent, 0, error, blame))

    def _conclude(self, result: ProxyResult) -> None:
        """Hand the result over, then finish the request (failed, if handing it over did)."""
        try:
            self._outcome.done(result)
        except Exception as exc:
            self._responder.finish(exc)
            return
        self._responder.finish()

    async def _relay_later(self, response: UpstreamResponse) -> None:
        forwarding = self._forwarding
        if response.upgraded:
            result = await tunnel_answer(
                self._request,
                self._responder,
                response,
                forwarding.timeouts,
                self.addr,
                self.started,
            )
        else:
            result = await relay_answer(
                self._responder,
                response,
                forwarding,
                self.addr,
                self.started,
                self._request,
            )
        self._outcome.done(result)


def forward_now(
    request: Request,
    responder: Responder,
    conn: Connection,
    forwarding: Forwarding,
    addr: str,
    outcome: Outcome,
    body: bytes | None = None,
) -> None:
    """``proxy.forward`` for a request without a body, or with its whole ``body`` already
    received (at most ``SMALL_BODY``, left in ``request.body`` for a replay), on ``conn``
    (idle, claimed from the pool, to the node ``addr``), without a task: the request is
    written now and the answer handled by the connection's callbacks; ``outcome`` hears how
    it went (see ``Outcome``)."""
    method = request.method
    # (a request without a body was always sent again on a fresh connection: it still is)
    again = body is None or replayable(method, body)
    exchange = Exchange(request, responder, conn, addr, forwarding, outcome, again)
    head = request_head(request, forwarding, framing(body, request.content_length))
    # (the exchange's start is the read timeout's: one clock reading for both)
    conn.send(method, head, exchange.started + forwarding.timeouts.read, exchange, body)
    responder.on_disconnect(exchange.client_left)
