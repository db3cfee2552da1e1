"""Fixed-window request counters kept in this process (limit-count's ``local`` policy).

Counters outlive config swaps (they are keyed by the attachment's identity, not by the
chain object), so a redeploy does not hand everyone a fresh quota.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Admission:
    allowed: bool
    remaining: int
    reset: int  # seconds until the window ends


class LocalCounters:
    def __init__(self, max_keys: int = 100_000) -> None:
        self._windows: dict[str, tuple[int, int]] = {}  # key → (window start, count)
        self._max_keys = max_keys

    def hit(self, key: str, limit: int, window: int, now: float) -> Admission:
        start = int(now // window) * window
        current_start, count = self._windows.get(key, (start, 0))
        if current_start != start:
            count = 0
        if count >= limit:
            return Admission(False, 0, start + window - int(now))
        count += 1
        if len(self._windows) >= self._max_keys and key not in self._windows:
            self._evict(start)
        self._windows[key] = (start, count)
        return Admission(True, limit - count, start + window - int(now))

    def _evict(self, start: int) -> None:
        """Drop finished windows; if every window is current, drop the oldest half (a flood
        of distinct keys must not grow memory without bound)."""
        stale = [k for k, (s, _) in self._windows.items() if s < start]
        for key in stale or list(self._windows)[: len(self._windows) // 2]:
            del self._windows[key]
