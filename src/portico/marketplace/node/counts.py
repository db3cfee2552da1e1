"""SQLite: how many nodes each bundle has, kept by triggers (migration 0024).

The catalogue's most common page is a bundle's first page with no filter, and its count was
most of its cost on SQLite: ``count(*)`` reads one index entry per node (13 ms at 100,000
nodes, as much as the rest of the request). A row per bundle, changed by the same statement
that adds, removes or re-bundles a node, answers it at once and is exact under concurrent
writes (SQLite runs one writer at a time, and the triggers run in the writer's
transaction). PostgreSQL counts through an index-only scan and has no such table.
``NodeRepository.sqlite_bundle_count`` reads it.
"""

from __future__ import annotations

#: SQLite: one row per bundle that has nodes
COUNTS = "catalogue_bundle_counts"
