"""The queries of the title search (the package says how each store's index serves it)."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Uuid, bindparam, column, func, literal_column, select, table
from sqlalchemy.ext.asyncio import AsyncSession

from portico.marketplace.node.models import Bundle, CatalogueNode
from portico.marketplace.node.search import KEYS, TITLES

N = CatalogueNode

_columns = CatalogueNode.__table__.c
#: SQLite: a node's FTS key, with copies of its bundle, title and sort columns (0023)
KEYED = table(
    KEYS,
    column("key"),
    column("node_id", Uuid()),
    column("bundle", _columns.bundle.type),
    column("title", _columns.title.type),
    column("created_at", _columns.created_at.type),
    column("updated_at", _columns.updated_at.type),
    column("moderation_state", _columns.moderation_state.type),
)
_titles = table(TITLES, column("rowid"))
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def title_contains(text_: str, *, sqlite: bool) -> ColumnElement[bool]:
    """The exact test. SQLite's LIKE already ignores ASCII case (and its lower() folds
    nothing else either). On PostgreSQL, lower() under the "C" collation folds ASCII only,
    byte by byte: four times faster than ILIKE, which folds every letter through the
    locale, and the expression of the trigram index."""
    escaped = _escaped(text_)
    if sqlite:
        return N.title.like(f"%{escaped}%", escape="/")
    folded = func.lower(N.title.collate("C"))
    return folded.like(f"%{escaped.translate(_ASCII_LOWER)}%", escape="/")


def _escaped(text_: str) -> str:
    return text_.replace("/", "//").replace("%", "/%").replace("_", "/_")


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
    node_ids = select(KEYED.c.node_id).where(KEYED.c.key.in_(matched))
    return N.id.in_(node_ids.scalar_subquery())


def sqlite_keyed(bundle: Bundle, text_: str) -> list[ColumnElement[bool]]:
    """The search on the key table alone (:data:`KEYED`): the bundle's keys whose title the
    FTS index matches and the exact test accepts, without reading a node row."""
    matched = select(_titles.c.rowid).where(_matching(text_))
    return [
        KEYED.c.key.in_(matched),
        KEYED.c.bundle == bundle,
        KEYED.c.title.like(f"%{_escaped(text_)}%", escape="/"),
    ]
