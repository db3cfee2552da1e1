"""Searching node titles: ``filter[search]``, the text anywhere in the title, ignoring the
case of ASCII letters, alike on both stores.

A containment test cannot use an ordered index: without help, every search reads every
title. Each store gets a trigram index (migration 0016), outside the models because neither
has an equivalent on the other store:

* PostgreSQL: a ``pg_trgm`` GIN index on ``lower(title COLLATE "C")``, the very expression
  the filter tests; the planner uses it when the pattern has a trigram (3 characters) and
  the estimate says few rows match, and scans otherwise.
* SQLite: an FTS5 table with the ``trigram`` tokenizer (:data:`TITLES`), kept by triggers on
  ``catalogue_nodes``. It is contentless and keyed by :data:`KEYS`, a table of integer keys
  for node ids: an FTS row is found by an integer, and the nodes' own ``rowid`` may be
  renumbered by ``VACUUM`` (their key is a UUID), which would silently detach the index.
  FTS folds case beyond ASCII, so its matches are a superset of the filter's; the exact
  test is applied to them.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Uuid, bindparam, column, func, literal_column, select, table
from sqlalchemy.ext.asyncio import AsyncSession

from portico.marketplace.node.models import CatalogueNode

N = CatalogueNode
#: SQLite: the FTS5 table of titles (contentless: its rows are keys of :data:`KEYS`)
TITLES = "catalogue_node_titles"
#: SQLite: one integer key per node, the FTS rows' ids
KEYS = "catalogue_node_search_keys"
#: PostgreSQL: the trigram index of folded titles
TRIGRAM_INDEX = "ix_catalogue_nodes_title_trgm"
#: a trigram index finds nothing for shorter text: those searches read every title
TRIGRAM = 3

_keys = table(KEYS, column("key"), column("node_id", Uuid()))
_titles = table(TITLES, column("rowid"))
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def storage_names(name: str | None, type_: str) -> bool:
    """Whether ``name`` is search storage that the models do not declare (for the schema
    comparison of migrations with models): the FTS table, its shadow tables, the keys, the
    trigram index."""
    if type_ == "table":
        return name is not None and (name == KEYS or name.startswith(TITLES))
    return type_ == "index" and name == TRIGRAM_INDEX


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


def indexed(text_: str) -> bool:
    """Whether the trigram index can find ``text_``."""
    return len(text_) >= TRIGRAM


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
