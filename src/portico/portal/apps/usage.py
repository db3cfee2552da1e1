"""An app's usage: what its active subscriptions report, added up into the one shape the
admin API's per-subscription analytics answer (``SubscriptionAnalytics``).

Counts add up exactly (each request is the app's on one product, so the subscriptions'
traffic does not overlap). Percentiles do not add up: with one subscription they are its
own; with several, each is the highest of theirs, an upper bound of the app's (at least
p% of every subscription's requests, so of all of them, took no longer). The quota shown is
the one closest to being spent (a limit of null: none of them has one).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from portico.marketplace.public import (
    LatencyRead,
    QuotaRead,
    SubscriptionAnalytics,
    Usage,
    Window,
)

PERCENTILES = ("p50", "p95", "p99")


def app_analytics(window: Window, usages: Sequence[Usage]) -> SubscriptionAnalytics:
    return SubscriptionAnalytics(
        window=window,
        requests=sum(u.requests for u in usages),
        errors=sum(u.errors for u in usages),
        latency_ms=LatencyRead.model_validate(
            {p: _highest(u.latency_ms.get(p) for u in usages) for p in PERCENTILES}
        ),
        quota=_closest_to_spent(usages),
    )


def _highest(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _closest_to_spent(usages: Sequence[Usage]) -> QuotaRead:
    limited = [u for u in usages if u.quota_limit is not None]
    if not limited:
        return QuotaRead(limit=None, used=None)
    tightest = max(limited, key=lambda u: _share(u.quota_used or 0, u.quota_limit or 0))
    return QuotaRead(limit=tightest.quota_limit, used=tightest.quota_used)


def _share(used: int, limit: int) -> float:
    """How much of the quota is spent (a limit of 0 is spent from the start)."""
    return float("inf") if limit <= 0 else used / limit
