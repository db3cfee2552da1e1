"""Listing: page, size, sort and filters parsed from the query string, strictly.

An unknown query parameter, sort key or filter is an error naming the parameter, never
silently ignored: a client that misspells ``?enviroment=prod`` must not receive every row.

Both surfaces share this: the management service's ``page``/``size``/``sort``/``<field>``
and the marketplace's ``page``/``limit``/``sort``/``filter[<field>]``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request

from portico.core.errors import ValidationFailed
from portico.core.openapi import raises

T = TypeVar("T")
MAX_PAGE = 1_000_000
# ASCII digits only: str.isdigit() also admits '²' (which int() refuses) and other scripts'
# digits (int() reads '١' as 1)
_INTEGER = re.compile(r"[0-9]+")
FilterStyle = Literal["plain", "bracket"]


@dataclass(frozen=True)
class SortKey:
    name: str
    descending: bool


@dataclass(frozen=True)
class ListQuery:
    page: int
    size: int
    sort: tuple[SortKey, ...]
    filters: Mapping[str, str] = field(default_factory=dict)

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.size

    def boolean(self, name: str) -> bool | None:
        """The filter ``name`` as a boolean (``true``/``false``), or None when not given."""
        raw = self.filters.get(name)
        if raw is None:
            return None
        if raw not in ("true", "false"):
            raise ValidationFailed(
                [{"parameter": name, "detail": f"{name}: must be true or false"}]
            )
        return raw == "true"


@dataclass(frozen=True)
class ListSpec:
    """What one list endpoint accepts."""

    sortable: frozenset[str]
    default_sort: str
    filterable: frozenset[str] = frozenset()
    extra_params: frozenset[str] = frozenset()  # endpoint-specific, parsed by the endpoint
    page_param: str = "page"
    size_param: str = "size"
    default_size: int = 20
    max_size: int = 100
    filter_style: FilterStyle = "plain"

    def parse(self, params: Sequence[tuple[str, str]]) -> ListQuery:
        errors: list[dict[str, str]] = []
        seen: dict[str, str] = {}
        filters: dict[str, str] = {}
        for key, value in params:
            if "\x00" in key or "\x00" in value:  # cannot match anything stored; PG refuses it
                errors.append({"parameter": key, "detail": f"{key}: must not contain NUL"})
                continue
            if key in seen:
                errors.append({"parameter": key, "detail": f"{key}: given more than once"})
                continue
            seen[key] = value
            name = self._filter_name(key)
            if name is not None:
                if name in self.filterable:
                    filters[name] = value
                else:
                    errors.append({"parameter": key, "detail": f"{key}: unknown filter"})
            elif key not in (self.page_param, self.size_param, "sort") and (
                key not in self.extra_params
            ):
                errors.append({"parameter": key, "detail": f"{key}: unknown query parameter"})
        page = self._integer(seen, self.page_param, 1, 1, MAX_PAGE, errors)
        size = self._integer(seen, self.size_param, self.default_size, 1, self.max_size, errors)
        sort = self._sort(seen.get("sort", self.default_sort), errors)
        if errors:
            raise ValidationFailed(errors)
        return ListQuery(page=page, size=size, sort=sort, filters=filters)

    def accepts(self, key: str) -> bool:
        """Whether ``parse`` reads the query parameter ``key`` (its value may still be
        refused): what a route that parses its query with this spec declares."""
        if key in (self.page_param, self.size_param, "sort") or key in self.extra_params:
            return True
        return self._filter_name(key) in self.filterable

    def openapi_parameters(
        self,
        filters: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        paged: bool = True,
        with_filters: bool = True,
    ) -> list[dict[str, Any]]:
        """The query parameters ``parse`` reads, for an OpenAPI document (FastAPI cannot see
        them: the dependency reads the raw query string). ``filters`` gives a filter its
        ``description`` and ``schema`` (a string otherwise); ``paged=False`` leaves out page,
        size and sort, for routes that refuse them; ``with_filters=False`` leaves out the
        filters, for a route that does not describe them. ``sort`` carries a pattern of the keys it
        accepts (each at most once), so that a client (or a generator of requests) knows
        what is valid."""
        parameters: list[dict[str, Any]] = []
        if paged:
            keys = "|".join(re.escape(key) for key in sorted(self.sortable))
            parameters += [
                _query(
                    self.page_param,
                    "1-based page.",
                    {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
                ),
                _query(
                    self.size_param,
                    f"Items per page (default {self.default_size}).",
                    {"type": "integer", "minimum": 1, "maximum": self.max_size},
                ),
                _query(
                    "sort",
                    "Comma-separated keys, '-' before a key for descending: "
                    f"{', '.join(sorted(self.sortable))}. Default {self.default_sort}.",
                    {"type": "string", "pattern": _sort_pattern(keys)},
                ),
            ]
        described = filters or {}
        for name in sorted(self.filterable) if with_filters else ():
            given = described.get(name, {})
            parameters.append(
                _query(
                    f"filter[{name}]" if self.filter_style == "bracket" else name,
                    given.get("description", f"Only items whose {name} is this."),
                    dict(given.get("schema", {"type": "string"})),
                )
            )
        return parameters

    def _filter_name(self, key: str) -> str | None:
        if self.filter_style == "bracket":
            if key.startswith("filter[") and key.endswith("]"):
                return key[len("filter[") : -1]
            return None
        reserved = {self.page_param, self.size_param, "sort", *self.extra_params}
        return None if key in reserved else key

    @staticmethod
    def _integer(
        seen: Mapping[str, str],
        name: str,
        default: int,
        low: int,
        high: int,
        errors: list[dict[str, str]],
    ) -> int:
        raw = seen.get(name)
        if raw is None:
            return default
        # leading zeros are harmless; past 18 digits the value is out of range anyway, and
        # int() is kept clear of its 4300-digit limit
        digits = raw.lstrip("0") if _INTEGER.fullmatch(raw) else None
        if digits is None or len(digits) > 18 or not low <= int(digits or "0") <= high:
            errors.append(
                {"parameter": name, "detail": f"{name}: must be an integer from {low} to {high}"}
            )
            return default
        return int(digits or "0")

    def _sort(self, raw: str, errors: list[dict[str, str]]) -> tuple[SortKey, ...]:
        keys: list[SortKey] = []
        for part in (p.strip() for p in raw.split(",")):
            name = part.removeprefix("-")
            if not name or name not in self.sortable:
                allowed = ", ".join(sorted(self.sortable))
                errors.append(
                    {"parameter": "sort", "detail": f"sort: unknown key {part!r}; use {allowed}"}
                )
                continue
            if any(key.name == name for key in keys):
                # "email,-email": which one would win is a guess; say so instead
                errors.append(
                    {"parameter": "sort", "detail": f"sort: key {name!r} given more than once"}
                )
                continue
            keys.append(SortKey(name, part.startswith("-")))
        return tuple(keys)


def _query(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description, "schema": schema}


def _sort_pattern(keys: str) -> str:
    """Comma-separated ``keys``, each optionally after '-', none twice (the lookahead refuses
    a key that comes back later, in either direction; ECMA-262 and Python read it alike)."""
    again = rf"(?!(?:.*,)?-?({keys}),(?:.*,)?-?\1(?:,|$))"
    return rf"^{again}-?(?:{keys})(?:,-?(?:{keys}))*$"


@raises(ValidationFailed)
@dataclass(frozen=True)
class ListQueryDependency:
    """A FastAPI dependency that parses the request's query string with ``spec``; the spec
    it carries tells the strict query check (``core/query.py``) what the route reads."""

    spec: ListSpec

    def __call__(self, request: Request) -> ListQuery:
        return self.spec.parse(list(request.query_params.multi_items()))


def list_query(spec: ListSpec) -> Callable[[Request], ListQuery]:
    return ListQueryDependency(spec)


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    page: int
    size: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.size)) if self.size else 1


async def paginate(
    session: AsyncSession,
    statement: Select[Any],
    query: ListQuery,
    columns: Mapping[str, ColumnElement[Any]],
    *,
    tiebreaker: ColumnElement[Any],
) -> Page[Any]:
    """Run ``statement`` for one page, ordered by ``query.sort`` (then ``tiebreaker`` so that
    pages never overlap), and count the whole result."""
    total = await session.scalar(
        select(func.count()).select_from(statement.order_by(None).subquery())
    )
    ordering = [
        columns[k.name].desc() if k.descending else columns[k.name].asc() for k in query.sort
    ]
    rows = await session.scalars(
        statement.order_by(*ordering, tiebreaker).offset(query.offset).limit(query.size)
    )
    return Page(items=list(rows), page=query.page, size=query.size, total=int(total or 0))
