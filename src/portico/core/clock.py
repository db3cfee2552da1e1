"""Time, in one place, so that tests can move it (token expiry, rate windows)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class Clock:
    """Wall clock in UTC. ``advance`` shifts it for tests; production never calls it."""

    def __init__(self) -> None:
        self._offset = timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC) + self._offset

    def timestamp(self) -> float:
        return self.now().timestamp()

    def advance(self, delta: timedelta) -> None:
        self._offset += delta


def utcnow() -> datetime:
    return datetime.now(UTC)
