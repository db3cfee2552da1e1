"""The request cycle of a client connection (``connection.HttpProtocol`` parses, this runs):
the handler is called once per request, one request at a time, as soon as the head is in. A
handler answers at once (returns None), takes the request over and finishes it from callbacks
(returns ``TAKEN``; see ``Responder.finish``), or returns a coroutine, which runs in the
connection's one task; that task waits for the next coroutine between requests (creating a task
costs more than a whole request's routing: on Python 3.11 each one is added to asyncio's weak
set of all tasks, in Python code). Requests therefore share the connection's ``contextvars``
context: gateway code sets no context variable per request.

What follows a request (the next pipelined one, an unread body discarded, closing) is the
connection's: ``_finish``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import Final, cast

from .channel import Limits
from .client_writes import ClientWrites
from .errors import ClientError
from .held_writes import HeldWrites
from .request import Request
from .responder import TAKEN, Handler, Responder

logger: Final = logging.getLogger("portico.gateway.http")


class RequestCycle(ClientWrites):  # (an asyncio.Protocol by the methods of its subclass)
    __slots__ = (
        "_active",
        "_beginning",
        "_detached",
        "_handler",
        "_idle_waiter",
        "_job",
        "_request",
        "_task",
    )

    def __init__(self, handler: Handler, limits: Limits, held_writes: HeldWrites | None) -> None:
        super().__init__(limits, held_writes)
        self._handler = handler
        self._detached = False  # handed over (an upgrade): nothing more of ours happens on it
        self._active: Responder | None = None
        self._request: Request | None = None  # the request ``_active`` answers, not begun yet
        self._task: asyncio.Task[None] | None = None
        self._job: Awaitable[None] | None = None  # what the task runs next
        self._beginning = False
        self._idle_waiter: asyncio.Future[None] | None = None

    def _start(self, request: Request, responder: Responder) -> None:
        self._active = responder
        self._request = request
        if self._beginning or (self._task is not None and self._idle_waiter is None):
            return  # begun by the loop in _begin, or by the task once its job is over
        self._begin()

    def _begin(self) -> None:
        """Call the handler for the request waiting to begin, and for the next pipelined ones
        as long as the handler answers them at once."""
        self._beginning = True
        try:
            while True:
                request, responder = self._request, self._active
                if request is None or responder is None:
                    return
                self._request = None
                try:
                    job = self._handler(request, responder)
                except Exception as exc:
                    self._failed(exc, request, responder)
                    job = None
                if job is None:
                    self._completed(request, responder)
                elif job is not TAKEN:
                    self._run_in_task(self._run(request, responder, cast(Awaitable[None], job)))
                    return
                # (TAKEN: finish() may already have started the next pipelined request)
        finally:
            self._beginning = False

    def _run_in_task(self, job: Awaitable[None]) -> None:
        self._job = job
        if self._task is None:
            self._task = self.loop.create_task(self._serve())
        elif self._idle_waiter is not None:
            self._wake_idle()
        # (otherwise the task is between jobs: it takes this one next)

    def _wake_idle(self) -> None:
        waiter = self._idle_waiter
        if waiter is not None:
            self._idle_waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def _serve(self) -> None:
        """The connection's task: the coroutines handlers return, one after the other."""
        try:
            while True:
                job = self._job
                if job is not None:
                    self._job = None
                    await job
                elif self._request is not None:
                    self._begin()  # a pipelined request started when the last job ended
                elif self.closed or self._detached:
                    return
                else:
                    waiter = self._idle_waiter = self.loop.create_future()
                    await waiter
        finally:
            self._task = None
            job, self._job = self._job, None
            if asyncio.iscoroutine(job):
                job.close()  # (cancelled between jobs: never started)

    async def _run(self, request: Request, responder: Responder, job: Awaitable[None]) -> None:
        try:
            await job
        except Exception as exc:
            self._failed(exc, request, responder)
        except asyncio.CancelledError:
            self._active = self._request = None  # (_serve's finally forgets the task)
            if not self._detached:
                self.close()
            raise
        if self._unanswered(request, responder):
            with contextlib.suppress(ClientError):
                await self.drain()  # a client that reads nothing gets no further responses
        self._finish(request, responder)

    def taken_finished(self, responder: object, error: BaseException | None) -> None:
        active = self._active
        if active is None or responder is not active:
            return
        request = active.request
        if error is not None:
            self._failed(error, request, active)
        self._completed(request, active)  # (_start begins the next pipelined request)

    def taken_deferred(self, responder: object, job: Awaitable[None]) -> None:
        active = self._active
        if active is None or responder is not active:
            if asyncio.iscoroutine(job):
                job.close()
            return
        self._run_in_task(self._run(active.request, active, job))

    def _completed(self, request: Request, responder: Responder) -> None:
        """The handler is done (at once, or from callbacks): the next request's turn, once a
        client that is not reading has taken the response in."""
        if self._unanswered(request, responder):
            self._run_in_task(self._drain_then_finish(request, responder))
        else:
            self._finish(request, responder)

    async def _drain_then_finish(self, request: Request, responder: Responder) -> None:
        with contextlib.suppress(ClientError):
            await self.drain()
        self._finish(request, responder)

    def _unanswered(self, request: Request, responder: Responder) -> bool:
        """Ends a response the handler left open (or answers 500 when it wrote nothing);
        whether the client is behind in reading it (the connection must drain first)."""
        if not responder.ended and not self._detached and not self.closed:
            if responder.started:
                responder.end()
            else:  # (a client that left before any answer was written is nobody to tell)
                logger.error("handler sent no response for %s %s", request.method, request.path)
                responder.send_error(500)
        return self.write_paused and not self.closed and not self._detached

    def _failed(self, exc: BaseException, request: Request, responder: Responder) -> None:
        if isinstance(exc, ClientError):
            if not responder.committed and not self.closed and exc.status < 499:
                self.must_close = True
                responder.reset()
                responder.send_error(exc.status)
            elif not responder.ended:
                self.close()
        else:
            logger.error("handler failed for %s %s", request.method, request.path, exc_info=exc)
            if not responder.committed and not self.closed:
                responder.reset()
                responder.send_error(500)
            elif not responder.ended:
                self.close()

    def _finish(self, request: Request, responder: Responder) -> None:
        """The request is over: the next one's turn, or the connection's end."""
        raise NotImplementedError
