"""Merged percentile sketches of whole hours, kept between queries while their hour is
unchanged.

A percentile query over a day merges some 35,000 hourly sketches (10 million requests;
``bench/bench_analytics.py``), and that merge is the query's cost. Of a day's hours only the
current one still changes, so a dashboard asking for the same day again redoes 23 identical
merges. Here each hour's merge is kept per query shape (org, measure, groups, filters) and
reused while the hour's *fingerprint* — the number of its rows and the requests they hold,
read from the hourly tier's covering index — is the one it was merged at. Ingest only ever
adds requests to an hour, and retention replaces or deletes whole hours, so any change to an
hour changes its fingerprint: a stale merge is never used, whichever process wrote the change
(the fingerprint is read from the store on every query, not trusted from memory).

An hour not in the cache is read from the hourly sketches, or, when the query groups and
filters by nothing finer than route and app and the hour is compacted as it stands now, from
the compacted ones (``compaction``: about a sixth of the rows to merge).

Bounded: at most ``MAX_ENTRIES`` (shape, hour) merges, least recently used dropped first.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from portico.management.analytics.repository import (
    ROUTE_COLUMNS,
    AnalyticsRepository,
    Condition,
    Fingerprint,
    Measure,
    Window,
)
from portico.management.telemetry import sketch as sketches

MAX_ENTRIES = 2048

#: (store, org, sketch column, group columns, conditions)
Shape = tuple[str, uuid.UUID, str, tuple[str, ...], tuple[Condition, ...]]


@dataclass(frozen=True)
class HourMerge:
    """One hour's sketches merged per group: group values → (values measured, merged
    sketch). The accumulators are only read once stored (``Accumulator.merge`` reads its
    argument)."""

    fingerprint: Fingerprint
    groups: dict[tuple[Any, ...], tuple[int, sketches.Accumulator]]


class HourCache:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[Shape, datetime], HourMerge] = OrderedDict()
        #: merges reused and merges computed since the process started (what a test or an
        #: operator can read to see the cache work)
        self.hits = 0
        self.misses = 0

    def get(self, shape: Shape, hour: datetime, fingerprint: Fingerprint) -> HourMerge | None:
        key = (shape, hour)
        found = self._entries.get(key)
        if found is None or found.fingerprint != fingerprint:
            return None
        self._entries.move_to_end(key)
        return found

    def put(self, shape: Shape, hour: datetime, merge: HourMerge) -> None:
        key = (shape, hour)
        self._entries[key] = merge
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()


#: the process's cache (each management process keeps its own; see the module docstring
#: for why that is safe)
CACHE = HourCache()


async def hourly_merges(
    repository: AnalyticsRepository,
    window: Window,
    *,
    org_id: uuid.UUID,
    conditions: Sequence[Condition],
    groups: Sequence[str],
    measure: Measure,
    cache: HourCache = CACHE,
) -> list[tuple[datetime, HourMerge]]:
    """The merged sketches of each hour of ``window`` (an hourly one) that has traffic:
    from the cache where the hour is unchanged, otherwise read (all changed hours in one
    query) and remembered."""
    shape: Shape = (repository.store, org_id, measure.sketch, tuple(groups), tuple(conditions))
    fingerprints = await repository.hour_fingerprints(window, org_id=org_id)
    found: dict[datetime, HourMerge] = {}
    stale: list[datetime] = []
    for hour, fingerprint in fingerprints.items():
        merge = cache.get(shape, hour, fingerprint)
        if merge is None:
            stale.append(hour)
        else:
            found[hour] = merge
    cache.hits += len(found)
    cache.misses += len(stale)
    if stale:
        by_route: set[datetime] = set()
        if {*groups, *(condition.column for condition in conditions)} <= ROUTE_COLUMNS:
            compacted = await repository.compactions(org_id, stale)
            by_route = {hour for hour in stale if compacted.get(hour) == fingerprints[hour]}
        for hours, compact in ((sorted(by_route), True), (sorted(set(stale) - by_route), False)):
            if not hours:
                continue
            merged = await _merge_hours(
                repository,
                hours,
                org_id=org_id,
                conditions=conditions,
                groups=groups,
                measure=measure,
                by_route=compact,
            )
            for hour, by_group in merged.items():
                merge = HourMerge(fingerprints[hour], by_group)
                cache.put(shape, hour, merge)
                found[hour] = merge
    return sorted(found.items(), key=lambda item: item[0])


async def _merge_hours(
    repository: AnalyticsRepository,
    hours: Sequence[datetime],
    *,
    org_id: uuid.UUID,
    conditions: Sequence[Condition],
    groups: Sequence[str],
    measure: Measure,
    by_route: bool,
) -> dict[datetime, dict[tuple[Any, ...], tuple[int, sketches.Accumulator]]]:
    """Each of ``hours`` merged per group, read in one query (their span: the hours of the
    span not asked for are left out)."""
    span = Window(True, hours[0], hours[-1] + timedelta(hours=1))
    rows = await repository.sketches(
        span,
        org_id=org_id,
        conditions=conditions,
        groups=groups,
        by_period=True,
        measure=measure,
        by_route=by_route,
    )
    width = len(groups)
    merged: dict[datetime, dict[tuple[Any, ...], tuple[int, sketches.Accumulator]]] = {
        hour: {} for hour in hours
    }
    for row in rows:
        by_group = merged.get(row.period)
        if by_group is None:  # an hour of the span read from the other table, or unchanged
            continue
        accumulator = sketches.Accumulator()
        accumulator.add_joined(row.sketches or "")
        accumulator.freeze()
        by_group[tuple(row[:width])] = (int(row.measured or 0), accumulator)
    return merged
