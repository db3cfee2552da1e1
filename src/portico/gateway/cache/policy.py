"""HTTP caching rules proxy-cache applies: Cache-Control directives, freshness from the
response (``s-maxage``, ``max-age``, ``Expires``), ``Vary``, which headers are kept; and the
body filter that keeps a copy of a response on its way to the client."""

from __future__ import annotations

import email.utils
from collections.abc import Callable, Iterable

from portico.gateway.cache.store import CachedResponse, CacheStore
from portico.gateway.context import RequestContext

#: never stored with a response: framing (redone per answer), per-request or per-answer
#: values, and the cache's own status headers
NOT_STORED = frozenset(
    {
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "age",
        "x-request-id",
        "apisix-cache-status",
        "cache-status",
    }
)
HIDDEN = ("cache-control", "expires")  # hide_cache_headers


def directives(values: Iterable[str]) -> dict[str, str]:
    """Cache-Control directives, lower-cased; a directive without a value maps to ""."""
    found: dict[str, str] = {}
    for value in values:
        for part in value.split(","):
            name, _, argument = part.partition("=")
            name = name.strip().lower()
            if name:
                found[name] = argument.strip().strip('"')
    return found


def seconds(cc: dict[str, str], name: str) -> int | None:
    value = cc.get(name)
    if value is None or not value.isdigit():
        return None
    return int(value)


def response_ttl(cc: dict[str, str], expires: str | None, now: float) -> float:
    """How long the response may be kept as its origin says (0: not at all); a shared cache
    reads ``s-maxage`` before ``max-age``, and ``Expires`` only without either."""
    for name in ("s-maxage", "max-age"):
        value = seconds(cc, name)
        if value is not None:
            return float(value)
    if expires:
        try:
            moment = email.utils.parsedate_to_datetime(expires)
        except (TypeError, ValueError):
            return 0.0  # an invalid Expires means "already expired" (RFC 9111 §5.3)
        return max(0.0, moment.timestamp() - now)
    return 0.0


def refused_by_request(cc: dict[str, str], age: float, remaining: float) -> bool:
    """Whether the client's own Cache-Control refuses an entry this old with this much
    freshness left (``max-age``, ``min-fresh``)."""
    max_age = seconds(cc, "max-age")
    if max_age is not None and age > max_age:
        return True
    min_fresh = seconds(cc, "min-fresh")
    return min_fresh is not None and remaining < min_fresh


def vary_names(values: list[str]) -> tuple[str, ...] | None:
    """The request headers a response varies on, lower-cased and sorted; None for ``*``
    (the response is not reusable at all)."""
    names: set[str] = set()
    for value in values:
        for part in value.split(","):
            name = part.strip().lower()
            if name == "*":
                return None
            if name:
                names.add(name)
    return tuple(sorted(names))


def truthy(value: str) -> bool:
    """APISIX's test for cache_bypass / no_cache: set, and not "0"."""
    return value not in ("", "0")


def stored_headers(items: list[tuple[str, str]], skip: set[str]) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in items if k not in NOT_STORED and k not in skip)


class Tee:
    """A body filter that keeps a copy of what passes (unchanged) and stores it at the end,
    unless it grew past the limit."""

    __slots__ = (
        "headers",
        "key",
        "limit",
        "now",
        "parts",
        "size",
        "status",
        "store",
        "ttl",
        "vary",
    )

    def __init__(
        self,
        store: CacheStore,
        now: Callable[[], float],
        limit: int,
        key: str,
        status: int,
        headers: tuple[tuple[str, str], ...],
        ttl: float,
        vary: tuple[tuple[str, str], ...],
    ) -> None:
        self.store, self.now, self.limit = store, now, limit
        self.key, self.status, self.headers, self.ttl, self.vary = key, status, headers, ttl, vary
        self.parts: list[bytes] | None = []
        self.size = 0

    def __call__(self, ctx: RequestContext, chunk: bytes, last: bool) -> bytes:
        parts = self.parts
        if parts is not None:
            self.size += len(chunk)
            if self.size > self.limit:
                self.parts = None  # too big: give up keeping it, keep relaying it
            else:
                if chunk:
                    parts.append(chunk)
                if last:
                    self.parts = None
                    now = self.now()
                    body = b"".join(parts)
                    entry = CachedResponse(
                        self.status, self.headers, body, now, now + self.ttl, self.vary
                    )
                    self.store.put(self.key, entry)
        return chunk
