"""A bounded map whose entries also expire: what an authentication plugin (basic-auth,
ldap-auth) or the admin API's ID-token check remembers of the credentials it verified, so
that a client sending them again costs a lookup, not a hash, a directory bind or a
signature check.

No lock: each is used by one event loop's thread."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class ExpiringLru(Generic[K, V]):
    """At most ``capacity`` entries, each usable until its own ``expires_at``; when full, a
    ``put`` drops the least recently used one (read by ``get`` or written by ``put``).
    Every operation is O(1)."""

    __slots__ = ("_entries", "_move_to_end", "capacity")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        #: key → (value, expires_at), least recently used first
        self._entries: OrderedDict[K, tuple[V, float]] = OrderedDict()
        self._move_to_end = self._entries.move_to_end  # bound once: get() is a hot path

    def get(self, key: K, now: float) -> V | None:
        """The value of ``key`` if it is there and ``now`` is before its expiry, else None.
        (An expired entry stays until it is replaced, dropped or evicted.)"""
        # a subscript, not .get(): cheaper on a hit (a miss then costs a hash or a bind)
        try:
            value, expires_at = self._entries[key]
        except KeyError:
            return None
        if expires_at > now:
            self._move_to_end(key)
            return value
        return None

    def put(self, key: K, value: V, expires_at: float) -> None:
        """Remembers ``value`` until ``expires_at`` (as the most recently used entry)."""
        entries = self._entries
        entries[key] = (value, expires_at)
        self._move_to_end(key)
        if len(entries) > self.capacity:
            entries.popitem(last=False)

    def discard(self, key: K) -> None:
        """Forgets ``key``, if it is there."""
        self._entries.pop(key, None)

    def __iter__(self) -> Iterator[K]:
        """The keys, least recently used first (expired ones too)."""
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` has an entry, expired or not (does not count as a use)."""
        return key in self._entries
