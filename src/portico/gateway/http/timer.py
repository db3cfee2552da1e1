"""A lazily rescheduled deadline: one timer handle per connection, not one per request.

Moving the deadline later (the usual case: each new request or chunk pushes it forward) costs
an attribute store; the pending handle fires at the old time, sees the new deadline and
re-arms itself. Only a deadline moved earlier cancels and replaces the handle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class Deadline:
    __slots__ = ("_callback", "_handle", "_loop", "_when", "when")

    def __init__(self, loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
        self._loop = loop
        self._callback = callback
        self._handle: asyncio.TimerHandle | None = None
        self._when = 0.0
        self.when: float | None = None

    def after(self, seconds: float) -> None:
        """Fire ``seconds`` from now (replacing any earlier setting)."""
        self.set(self._loop.time() + seconds)

    def set(self, when: float | None) -> None:
        self.when = when
        if when is None:
            return
        handle = self._handle
        if handle is None or when < self._when:
            if handle is not None:
                handle.cancel()
            self._when = when
            self._handle = self._loop.call_at(when, self._fire)

    def clear(self) -> None:
        self.when = None

    def cancel(self) -> None:
        self.when = None
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        when = self.when
        if when is None:
            return
        if self._loop.time() >= when:
            self.when = None
            self._callback()
        else:
            self._when = when
            self._handle = self._loop.call_at(when, self._fire)
