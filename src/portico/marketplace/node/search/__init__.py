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
  test is applied to them. Each key also holds a copy of its node's bundle, title, created
  and updated times and moderation state (migration 0023, the same triggers): a search
  filtered on nothing else is found, counted and ordered from the keys alone, without a
  random read of each candidate's node row.
"""

from __future__ import annotations

#: SQLite: the FTS5 table of titles (contentless: its rows are keys of :data:`KEYS`)
TITLES = "catalogue_node_titles"
#: SQLite: one integer key per node, the FTS rows' ids
KEYS = "catalogue_node_search_keys"
#: PostgreSQL: the trigram index of folded titles
TRIGRAM_INDEX = "ix_catalogue_nodes_title_trgm"
#: a trigram index finds nothing for shorter text: those searches read every title
TRIGRAM = 3


def storage_names(name: str | None, type_: str) -> bool:
    """Whether ``name`` is search storage that the models do not declare (for the schema
    comparison of migrations with models): the FTS table, its shadow tables, the keys, the
    trigram index."""
    if type_ == "table":
        return name is not None and (name == KEYS or name.startswith(TITLES))
    return type_ == "index" and name == TRIGRAM_INDEX


def indexed(text_: str) -> bool:
    """Whether the trigram index can find ``text_``."""
    return len(text_) >= TRIGRAM
