"""Reading the source types: the registry of connectors, nothing stored."""

from __future__ import annotations

from collections.abc import Callable

from portico.core.errors import NotFound
from portico.core.pagination import ListQuery, Page
from portico.marketplace.connectors.base import Connector
from portico.marketplace.connectors.registry import CONNECTORS


class SourceNotFound(NotFound):
    default_detail = "source type not found"


def list_(*, query: ListQuery) -> Page[Connector]:
    """A page of the source types, sorted as asked (``id``, ``label``)."""
    connectors = list(CONNECTORS.values())
    for key in reversed(query.sort):  # stable sorts, the last key first
        connectors.sort(key=_sort_key(key.name), reverse=key.descending)
    items = connectors[query.offset : query.offset + query.size]
    return Page(items=items, page=query.page, size=query.size, total=len(connectors))


def _sort_key(name: str) -> Callable[[Connector], str]:
    return lambda connector: str(getattr(connector, name))


def get(source: str) -> Connector:
    connector = CONNECTORS.get(source)
    if connector is None:
        raise SourceNotFound(f"no source type '{source}'")
    return connector
