"""The queries of the title search (the package says how each store's index serves it)."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Uuid, bindparam, column, func, literal_column, select, table
from sqlalchemy.ext.asyncio import AsyncSession

from portico.marketplace.node.models import CatalogueNode
from portico.marketplace.node.search import KEYS, TITLES

N = CatalogueNode

_keys = table(KEYS, column("key"), column("node_id", Uuid()))
_titles = table(TITLES, column("rowid"))
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def title_contains(text_: str, *, sqlite: bool) -> ColumnElement[bool]:
    """The exact test. SQLite's LIKE already ignores ASCII case (and its lower() folds
    nothing else either). On PostgreSQL, lower() under the "C" collation folds ASCII only,
    byte by byte: four times faster than ILIKE, which folds every letter through the
    locale, and the expression of the trigram index."""
    escaped = text_.replace("/", "//").replace("%", "/%").replace("_", "/_")
    if sqlite:
        return N.title.like(f"%{escaped}%", escape="/")
    folded = func.lower(N.title.collate("C"))
    return folded.like(f"%{escaped.translate(_ASCII_LOWER)}%", escape="/")


def _phrase(text_: str) -> str:
    """An FTS5 query matching ``text_`` as a substring: a phrase of its trigrams, quoted so
    that no character is query syntax."""
    return '"' + text_.replace('"', '""') + '"'


def _matching(text_: str) -> ColumnElement[bool]:
    return literal_column(TITLES).op("MATCH")(bindparam("phrase", _phrase(text_), unique=True))


async def sqlite_match_count(session: AsyncSession, text_: str) -> int:
    """How many titles of every bundle the FTS index matches (a superset of the filter's
    matches): reading the doclists is cheap even when every title matches."""
    found = await session.scalar(select(func.count()).select_from(_titles).where(_matching(text_)))
    return int(found or 0)


def sqlite_candidates(text_: str) -> ColumnElement[bool]:
    """Nodes whose title the FTS index matches (the exact test still follows)."""
    matched = select(_titles.c.rowid).where(_matching(text_))
    node_ids = select(_keys.c.node_id).where(_keys.c.key.in_(matched))
    return N.id.in_(node_ids.scalar_subquery())
