"""How many catalogue nodes each facet has, kept by triggers (migration 0024).

A facet is a combination of the low-cardinality columns: bundle, source type, moderation
state (``''`` for nodes without one) and visibility. A page's count was most of its cost:
``count(*)`` reads one index entry per node (at 100,000 nodes 13 ms on SQLite, ~20 ms on
PostgreSQL). Counted per facet by the statements that write the nodes, a count filtered by
any of these columns is a sum over a few dozen rows, exact under concurrent writes (the
triggers run in the writer's transaction; a reader sees the counts its snapshot sees).

SQLite keeps one row per facet. PostgreSQL appends each statement's net change as rows of
its own (no lock for concurrent writers to wait on) and folds them now and then; the sum is
the same either way. ``NodeRepository.facet_count`` reads them.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, String, column, table

FACET_COUNTS = table(
    "catalogue_facet_counts",
    column("bundle", String()),
    column("source_type", String()),
    column("moderation_state", String()),
    column("visibility", String()),
    column("nodes", BigInteger()),
)
#: the moderation state of a node that has none
NO_STATE = ""
