"""The catalogue's queries: pages of API and product nodes, a product's APIs, and the checks
of what a body refers to.

A page is three short queries, each shaped for the indexes of ``node/models.py`` (every list
order is an index on ``(bundle, <key>, id)``):

* the count, over the filters alone (no order; a covering index scan where the filters are
  columns of one);
* the page's ids, ordered and offset: the scan reads the index only (and the rows the
  filters need), never whole rows it then skips, which keeps late pages cheap;
* the page's rows, by id.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import defer

from portico.core.pagination import ListQuery, Page, SortKey
from portico.marketplace.node import search
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    SourceType,
    Visibility,
)
from portico.marketplace.node.repository import NodeRepository
from portico.marketplace.node.search import repository as search_queries
from portico.marketplace.organisation.models import Organisation

N = CatalogueNode
#: the columns a list is ordered by (the sort keys', and the id that breaks ties)
ORDER_COLUMNS = ("title", "created_at", "updated_at", "moderation_state", "id")


@dataclass(frozen=True)
class NodeFilters:
    source_type: SourceType | None = None
    connection_id: uuid.UUID | None = None
    moderation_state: ModerationState | None = None
    visibility: Visibility | None = None
    organisation_id: uuid.UUID | None = None
    published: bool | None = None
    title: str | None = None
    #: case-insensitive, anywhere in the title
    search: str | None = None


#: a search matching at most this many nodes pages through its matches alone (below)
SEARCH_SET = 5_000


class CatalogueRepository(NodeRepository):
    async def page_of(
        self, bundle: Bundle, filters: NodeFilters, query: ListQuery, *, documentation: bool = True
    ) -> Page[N]:
        """One page of the bundle's nodes; without loading their OpenAPI documents when
        ``documentation`` is false (reading the attribute then is an error)."""
        audience = self._audience()
        conditions = [N.bundle == bundle, *self._conditions(filters), *audience]
        if filters.search is not None and not self._sqlite:
            ids, total = await self._search_page(conditions, query)
        elif filters.search is not None and await self._few_indexed(filters.search):
            if _keyed(filters) and not audience:
                # The key table holds all the page needs: no node row is read to find,
                # count and order the candidates (search/repository.py, KEYED).
                keyed = search_queries.sqlite_keyed(bundle, filters.search)
                keyed.extend(_state_conditions(search_queries.KEYED.c, filters))
                ids, total = await self._keyed_page(keyed, query)
            else:
                # The FTS index names a few candidates (the exact condition stays among the
                # others): like PostgreSQL, one pass finds, counts and orders them.
                conditions.append(search_queries.sqlite_candidates(filters.search))
                ids, total = await self._search_page(conditions, query)
        else:
            # the facet counts know nothing of an audience: a page with one counts its nodes
            facets = _faceted(filters) and not audience
            total = await self._count(bundle, filters, conditions, facets=facets)
            if filters.search is not None and total <= SEARCH_SET and query.sort[0].name != "title":
                # Few matches, not in title order: find them first, then order those alone.
                # Walking the sort's index and reading each row's title to find a few would
                # read every row; in title order, the title index is the sort's, and its
                # walk stops at the page's last match.
                matching = select(N.id).where(*conditions).scalar_subquery()
                conditions = [conditions[0], N.id.in_(matching)]
            ids = await self._page_ids(conditions, query, total)
        loading = select(N).where(N.id.in_(ids))
        if not documentation:
            loading = loading.options(defer(N.documentation, raiseload=True))
        rows = {node.id: node for node in await self.all(loading)} if ids else {}
        return Page(
            items=[rows[i] for i in ids if i in rows],
            page=query.page,
            size=query.size,
            total=total,
        )

    async def _count(
        self,
        bundle: Bundle,
        filters: NodeFilters,
        conditions: list[ColumnElement[bool]],
        *,
        facets: bool,
    ) -> int:
        """How many nodes meet ``conditions``; from the facet counts when ``facets`` (the
        filters are all columns of them, and no audience narrows the page)."""
        if facets:
            return await self.facet_count(
                bundle,
                source_type=filters.source_type,
                moderation_state=filters.moderation_state,
                visibility=filters.visibility,
                published=filters.published,
            )
        if self._sqlite and _only_unindexed(filters):
            # No index holds visibility: SQLite would read the rows through an index of the
            # bundle one by one, about four times slower than reading the table in order
            # (which it does once the bundle's term cannot use an index).
            conditions = [(N.bundle + "") == bundle, *conditions[1:]]
        counted = await self.session.scalar(select(func.count()).select_from(N).where(*conditions))
        return int(counted or 0)

    async def _search_page(
        self, conditions: list[ColumnElement[bool]], query: ListQuery
    ) -> tuple[list[uuid.UUID], int]:
        """A search: the page and the count in one query. Finding the matches is the cost
        of the request (through the trigram index, or reading every title); finding them
        again for the page would double it. They are found and counted in one pass, then
        ordered: ``OFFSET 0`` keeps the planner from walking a sort order's index instead
        and reading every row out of order to test its title (three times slower)."""
        found = (
            select(*(getattr(N, name) for name in ORDER_COLUMNS), func.count().over().label("n"))
            .where(*conditions)
            .offset(0)
            .subquery()
        )
        count = select(func.count()).select_from(N).where(*conditions)
        return await self._counted_page(found, found.c.n, count, query)

    async def _keyed_page(
        self, conditions: list[ColumnElement[bool]], query: ListQuery
    ) -> tuple[list[uuid.UUID], int]:
        """SQLite, a search answered by the search keys alone: the matches are gathered once
        (a materialised CTE), then counted and ordered from there. The window count of
        :meth:`_search_page` costs SQLite another copy of every match: a third of the
        query's time at a few thousand matches (bench/bench_catalogue.py)."""
        keys = search_queries.KEYED
        found = (
            select(
                keys.c.node_id.label("id"),
                *(keys.c[name] for name in ORDER_COLUMNS if name != "id"),
            )
            .where(*conditions)
            .cte("found")
            .prefix_with("MATERIALIZED")
        )
        total = select(func.count()).select_from(found).scalar_subquery()
        count = select(func.count()).select_from(found)
        return await self._counted_page(found, total, count, query)

    async def _counted_page(
        self, found: Any, total: ColumnElement[Any], count: Select[Any], query: ListQuery
    ) -> tuple[list[uuid.UUID], int]:
        """The page of ``found`` (the matches with their order columns) in the query's
        order, each row carrying ``total``; past the last page, ``count`` alone (a first
        page without rows has nothing to count)."""
        rows = (
            await self.session.execute(
                select(found.c.id, total)
                .order_by(*ordering(query.sort, source=found.c))
                .offset(query.offset)
                .limit(query.size)
            )
        ).all()
        if rows:
            return [row[0] for row in rows], int(rows[0][1])
        if query.offset == 0:
            return [], 0
        counted = await self.session.scalar(count)
        return [], int(counted or 0)

    async def _few_indexed(self, text: str) -> bool:
        """SQLite: whether the FTS index can find the titles containing ``text`` and finds
        few enough that testing them alone beats reading every title (a text in most titles
        is read faster in order, through the title index)."""
        if not search.indexed(text):
            return False
        return await search_queries.sqlite_match_count(self.session, text) <= SEARCH_SET

    @property
    def _sqlite(self) -> bool:
        return self.session.get_bind().dialect.name == "sqlite"

    async def _page_ids(
        self, conditions: list[ColumnElement[bool]], query: ListQuery, total: int
    ) -> list[uuid.UUID]:
        """The page's ids, in order. A page in the second half of the list is read from the
        end, in the opposite order (then turned back): an offset costs the scan of every row
        it skips, so the last page costs what the first does, and no page more than half
        the list. The order is total (the id breaks ties), so its reverse is exact."""
        start = query.offset
        if start >= total:
            return []
        end = min(start + query.size, total)
        backwards = start > total - end
        offset = total - end if backwards else start
        statement = (
            select(N.id)
            .where(*conditions)
            .order_by(*ordering(query.sort, reverse=backwards))
            .offset(offset)
            .limit(end - start)
        )
        ids = list(await self.session.scalars(statement))
        return ids[::-1] if backwards else ids

    def _audience(self) -> list[ColumnElement[bool]]:
        """What a subclass adds to every page, count and search of the nodes (the
        storefront: what its viewer may see); nothing for the admin API's catalogue. The
        search keys and the bundle counts know nothing of an audience: a page with one
        reads the nodes."""
        return []

    def _conditions(self, filters: NodeFilters) -> list[ColumnElement[bool]]:
        out: list[ColumnElement[bool]] = []
        if filters.source_type is not None:
            out.append(N.source_type == filters.source_type)
        if filters.connection_id is not None:
            out.append(N.connection_id == filters.connection_id)
        if filters.visibility is not None:
            out.append(N.visibility == filters.visibility)
        if filters.organisation_id is not None:
            out.append(N.organisation_id == filters.organisation_id)
        out.extend(_state_conditions(N.__table__.c, filters))
        if filters.title is not None:
            out.append(N.title == filters.title)
        if filters.search is not None:
            out.append(search_queries.title_contains(filters.search, sqlite=self._sqlite))
        return out

    async def api_ids(self, node_ids: Collection[uuid.UUID]) -> set[uuid.UUID]:
        """Those of ``node_ids`` that are API nodes."""
        if not node_ids:
            return set()
        found = await self.session.scalars(
            select(N.id).where(N.id.in_(list(node_ids)), N.bundle == Bundle.APIS)
        )
        return set(found)

    async def organisation_exists(self, organisation_id: uuid.UUID) -> bool:
        found = await self.session.scalar(
            select(Organisation.id).where(Organisation.id == organisation_id)
        )
        return found is not None


def ordering(
    keys: Sequence[SortKey], *, reverse: bool = False, source: Any = N
) -> list[ColumnElement[Any]]:
    """ORDER BY for ``keys``, then the id as tie-breaker, so that pages never overlap.

    Sorting by moderation state orders by title within a state (in the state's direction,
    unless the title is a key of its own): the order of the ``(bundle, moderation_state,
    title, id)`` index. The id follows the last key's direction, so that a descending sort
    is the index read backwards rather than a sort of every row. ``reverse``: the exact
    opposite order (each direction flipped, nulls included: both stores put them at the
    same end for a direction and at the other for its opposite). ``source``: where the
    columns are read (the model, or a subquery's ``c`` holding ``ORDER_COLUMNS``)."""
    names = [k.name for k in keys]
    columns: list[tuple[str, bool]] = [(k.name, k.descending) for k in keys]
    if "moderation_state" in names and "title" not in names:
        state = names.index("moderation_state")
        columns.insert(state + 1, ("title", keys[state].descending))
    columns.append(("id", columns[-1][1] if columns else False))
    return [
        getattr(source, name).desc() if descending != reverse else getattr(source, name).asc()
        for name, descending in columns
    ]


def _state_conditions(columns: Any, filters: NodeFilters) -> list[ColumnElement[bool]]:
    """The moderation state and published filters, on the nodes' columns or the search
    keys' copies of them."""
    out: list[ColumnElement[bool]] = []
    if filters.moderation_state is not None:
        out.append(columns.moderation_state == filters.moderation_state)
    if filters.published is not None:
        # The catalogue's bundles are moderated, and a moderated node is published
        # exactly when its state is (node/models.py): the state is in the index of the
        # state order, so counting and paging read that index instead of every row.
        published = columns.moderation_state == ModerationState.PUBLISHED
        out.append(published if filters.published else ~published)
    return out


def _unset(*values: object) -> bool:
    return all(value is None for value in values)


def _keyed(filters: NodeFilters) -> bool:
    """Whether a search's other filters are all columns the search keys hold a copy of."""
    f = filters
    return _unset(f.source_type, f.connection_id, f.visibility, f.organisation_id, f.title)


def _faceted(filters: NodeFilters) -> bool:
    """Whether the filters are all columns the facet counts hold (node/counts.py)."""
    return _unset(filters.connection_id, filters.organisation_id, filters.title, filters.search)


def _only_unindexed(filters: NodeFilters) -> bool:
    """Whether visibility is the only filter: the others' columns are each in an index."""
    f = filters
    indexed = (f.source_type, f.connection_id, f.moderation_state, f.organisation_id)
    return f.visibility is not None and _unset(*indexed, f.published, f.title, f.search)
