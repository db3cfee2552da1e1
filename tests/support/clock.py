"""A clock for tests that must know exactly what time the code under test reads."""

from __future__ import annotations

from datetime import datetime

from portico.core.clock import Clock, utcnow


class FrozenClock(Clock):
    """A :class:`Clock` that stands still (at the moment it was made, unless told) and moves
    only when advanced: a duration the code computes from ``now()`` is exactly what it chose,
    not that less however long the test took to look at it."""

    def __init__(self, at: datetime | None = None) -> None:
        super().__init__()
        self._at = at or utcnow()

    def now(self) -> datetime:
        return self._at + self._offset  # what advance() added up
