"""Rate-limit state kept in this process: fixed-window counters (limit-count's ``local``
policy) and leaky buckets (limit-req).

The state outlives config swaps (it hangs off the gateway, keyed by the attachment's identity,
not by the chain object), so a redeploy does not hand everyone a fresh quota.
"""

from __future__ import annotations


class Admission:
    """A limiter's verdict on one request. (A plain class, not a
    ``NamedTuple``: see CONVENTIONS.md "Compiled modules".)"""

    __slots__ = ("allowed", "remaining", "reset")

    def __init__(self, allowed: bool, remaining: int, reset: int) -> None:
        self.allowed = allowed
        self.remaining = remaining
        self.reset = reset  # seconds until the window ends

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Admission) and (
            (self.allowed, self.remaining, self.reset)
            == (other.allowed, other.remaining, other.reset)
        )

    def __hash__(self) -> int:
        return hash((self.allowed, self.remaining, self.reset))

    def __repr__(self) -> str:
        return f"Admission({self.allowed}, {self.remaining}, {self.reset})"


class LeakyBuckets:
    """nginx's ``limit_req`` (and APISIX's limit-req): per key, the *excess* — how many
    requests ahead of the ``rate`` schedule the client is — leaks at ``rate`` per second;
    a request that would push it above ``burst`` is refused and leaves the bucket as it was."""

    def __init__(self, max_keys: int = 100_000) -> None:
        # key → (excess after the last admitted request, its time, when the bucket is empty
        # again so that the entry means nothing any more)
        self._buckets: dict[str, tuple[float, float, float]] = {}
        self._max_keys = max_keys

    def incoming(self, key: str, rate: float, burst: float, now: float) -> float | None:
        """Seconds this request must wait to keep to ``rate`` (0.0: none), or None: refused."""
        found = self._buckets.pop(key, None)  # re-inserted below: the dict stays LRU-ordered
        excess = 0.0
        if found is not None:
            previous, last, _ = found
            # a clock that stepped back must not freeze the leak (elapsed is clamped, and the
            # entry then restarts from the new time)
            elapsed = max(0.0, now - last)
            excess = max(previous - rate * elapsed + 1.0, 0.0)
            if excess > burst:
                self._buckets[key] = found
                return None
        elif len(self._buckets) >= self._max_keys:
            self._evict(now)
        self._buckets[key] = (excess, now, now + (excess + 1.0) / rate)
        return excess / rate

    def _evict(self, now: float) -> None:
        """Drop buckets that have emptied (the same as absent); if none has, the least recently
        used half (a flood of distinct keys must not grow memory without bound)."""
        drained = [k for k, (_, _, empty_at) in self._buckets.items() if empty_at <= now]
        for key in drained or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[key]

    def __len__(self) -> int:
        return len(self._buckets)


class LocalCounters:
    def __init__(self, max_keys: int = 100_000) -> None:
        self._windows: dict[str, tuple[int, int]] = {}  # key → (window start, count)
        self._max_keys = max_keys
        #: limit-req's state, here so that it lives as long as the counters do
        self.buckets = LeakyBuckets(max_keys)

    def hit(self, key: str, limit: int, window: int, now: float) -> Admission:
        start = int(now // window) * window
        return self.hit_within(key, limit, start, start + window, now)

    def hit_within(self, key: str, limit: int, start: int, end: int, now: float) -> Admission:
        """Count one request against ``key`` in the window ``[start, end)`` (epoch seconds;
        calendar windows such as months are not multiples of a fixed length)."""
        current_start, count = self._windows.get(key, (start, 0))
        if current_start != start:
            count = 0
        if count >= limit:
            return Admission(False, 0, end - int(now))
        count += 1
        if len(self._windows) >= self._max_keys and key not in self._windows:
            self._evict(start)
        self._windows[key] = (start, count)
        return Admission(True, limit - count, end - int(now))

    def _evict(self, start: int) -> None:
        """Drop finished windows; if every window is current, drop the oldest half (a flood
        of distinct keys must not grow memory without bound)."""
        stale = [k for k, (s, _) in self._windows.items() if s < start]
        for key in stale or list(self._windows)[: len(self._windows) // 2]:
            del self._windows[key]
