"""The remote inventory: what a connection's remote side exposes, cached, filtered and paged.

Listing a remote side costs one or more calls to it (every page of a management service,
every document of an ``openapi`` connection), so each process keeps what it read for five
minutes (:data:`TTL`), per connection and kind (APIs, products). An entry is keyed by the
connection's ``updated_at`` too: a connection replaced (PUT: another address, another
organisation) is read again at once rather than served what its former remote side said.
``refresh=1`` reads the remote side again and refills the entry. Only the remote side's
answer is cached: whether each item was imported is read from the store on every request,
so an import shows at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from portico.core.errors import ValidationFailed
from portico.core.filter_values import FilterValues
from portico.core.pagination import ListQuery, ListSpec, Page

T = TypeVar("T")
#: how long a remote side's answer is served without asking it again
TTL = timedelta(minutes=5)
IMPORT_STATUSES = ("new", "existing")


@dataclass(frozen=True)
class _Entry:
    version: datetime
    fetched_at: datetime
    items: tuple[Any, ...]


class InventoryCache:
    """One process's cache of remote inventories (a few connections, each a list)."""

    def __init__(self, ttl: timedelta = TTL) -> None:
        self.ttl = ttl
        self._entries: dict[tuple[uuid.UUID, str], _Entry] = {}

    def get(
        self, connection_id: uuid.UUID, kind: str, version: datetime, now: datetime
    ) -> tuple[Any, ...] | None:
        entry = self._entries.get((connection_id, kind))
        if entry is None or entry.version != version or now - entry.fetched_at >= self.ttl:
            return None
        return entry.items

    def put(
        self,
        connection_id: uuid.UUID,
        kind: str,
        version: datetime,
        now: datetime,
        items: Sequence[Any],
    ) -> None:
        # entries of connections gone or replaced are dropped as they expire
        self._entries = {
            key: entry for key, entry in self._entries.items() if now - entry.fetched_at < self.ttl
        }
        self._entries[(connection_id, kind)] = _Entry(version, now, tuple(items))


def spec(id_key: str) -> ListSpec:
    """The list parameters of an inventory whose items are identified by ``id_key``."""
    return ListSpec(
        sortable=frozenset({"title", id_key}),
        default_sort="title",
        filterable=frozenset({"search", id_key, "name", "import_status"}),
        extra_params=frozenset({"refresh"}),
        filter_style="bracket",
        size_param="limit",
        default_size=50,
        max_size=500,
    )


def parameters(id_key: str, what: str) -> list[dict[str, Any]]:
    """The query parameters of an inventory of ``what`` (APIs, products), for its OpenAPI
    description."""
    described: dict[str, dict[str, Any]] = {
        "search": {"description": f"{what} whose title contains this (case-insensitive)."},
        id_key: {"description": f"Only the one with this {id_key}."},
        "name": {"description": f"{what} of exactly this title."},
        "import_status": {
            "description": "new (never imported) or existing (imported before).",
            "schema": {"type": "string", "enum": list(IMPORT_STATUSES)},
        },
    }
    refresh = {
        "name": "refresh",
        "in": "query",
        "description": "1: read the remote side again rather than what was read in the last "
        "five minutes (and keep the new answer); 0, the default: the cached answer.",
        "schema": {"type": "string", "enum": ["0", "1"]},
    }
    return [*spec(id_key).openapi_parameters(described), refresh]


def wants_refresh(raw: str | None) -> bool:
    if raw is None or raw == "0":
        return False
    if raw == "1":
        return True
    raise ValidationFailed([{"parameter": "refresh", "detail": "refresh: must be 0 or 1"}])


@dataclass(frozen=True)
class Row(Generic[T]):
    item: T
    id: str
    title: str
    node_id: uuid.UUID | None


def page_of(
    items: Sequence[T],
    query: ListQuery,
    *,
    id_key: str,
    id_of: Callable[[T], str],
    title_of: Callable[[T], str],
    node_ids: Mapping[str, uuid.UUID],
) -> Page[Row[T]]:
    """The page ``query`` asks for, of ``items`` marked with the nodes imported from them."""
    rows = [Row(item, id_of(item), title_of(item), node_ids.get(id_of(item))) for item in items]
    filters = query.filters
    values = FilterValues(filters)
    status = values.one_of("import_status", IMPORT_STATUSES)
    values.check()
    if status is not None:
        existing = status == "existing"
        rows = [r for r in rows if (r.node_id is not None) is existing]
    if "search" in filters:
        needle = filters["search"].casefold()
        rows = [r for r in rows if needle in r.title.casefold()]
    if "name" in filters:
        rows = [r for r in rows if r.title == filters["name"]]
    if id_key in filters:
        rows = [r for r in rows if r.id == filters[id_key]]
    # the last key first: Python's sort is stable, so each earlier key wins ties
    rows.sort(key=lambda r: r.id)
    for key in reversed(query.sort):
        if key.name == "title":
            rows.sort(key=lambda r: (r.title.casefold(), r.title), reverse=key.descending)
        else:
            rows.sort(key=lambda r: r.id, reverse=key.descending)
    start = query.offset
    return Page(
        items=rows[start : start + query.size], page=query.page, size=query.size, total=len(rows)
    )
