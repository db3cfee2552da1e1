"""catalogue title search

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25 09:12:00.000000

``filter[search]`` finds text anywhere in a title: no ordered index helps, and at 100,000
nodes reading every title costs more than a page may. A trigram index on each store
(portico/marketplace/node/search/ says how each is used):

* PostgreSQL: the ``pg_trgm`` extension (trusted: a database owner may create it) and a GIN
  index on ``lower(title COLLATE "C")``. Where the role may not create the extension, the
  migration says so and goes on without the index: searches then read every title, as
  before, and are right, only slower.
* SQLite: a contentless FTS5 table with the ``trigram`` tokenizer, keyed by a table of
  integer keys (not the nodes' rowids, which ``VACUUM`` may renumber), kept by triggers.
"""

import logging
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")

TITLES = "catalogue_node_titles"
KEYS = "catalogue_node_search_keys"
TRIGRAM_INDEX = "ix_catalogue_nodes_title_trgm"

_SQLITE_UP = [
    "CREATE TABLE catalogue_node_search_keys (key INTEGER PRIMARY KEY, node_id CHAR(32) NOT NULL UNIQUE)",
    "CREATE VIRTUAL TABLE catalogue_node_titles USING fts5("
    "title, content='', tokenize='trigram case_sensitive 0')",
    # the FTS row of a node is its key's; 'delete' needs the indexed text (contentless)
    """CREATE TRIGGER catalogue_node_titles_insert AFTER INSERT ON catalogue_nodes BEGIN
        INSERT INTO catalogue_node_search_keys(node_id) VALUES (new.id);
        INSERT INTO catalogue_node_titles(rowid, title)
            VALUES ((SELECT key FROM catalogue_node_search_keys WHERE node_id = new.id), new.title);
    END""",
    """CREATE TRIGGER catalogue_node_titles_delete AFTER DELETE ON catalogue_nodes BEGIN
        INSERT INTO catalogue_node_titles(catalogue_node_titles, rowid, title)
            VALUES ('delete', (SELECT key FROM catalogue_node_search_keys WHERE node_id = old.id), old.title);
        DELETE FROM catalogue_node_search_keys WHERE node_id = old.id;
    END""",
    """CREATE TRIGGER catalogue_node_titles_update AFTER UPDATE OF title ON catalogue_nodes
    WHEN old.title IS NOT new.title BEGIN
        INSERT INTO catalogue_node_titles(catalogue_node_titles, rowid, title)
            VALUES ('delete', (SELECT key FROM catalogue_node_search_keys WHERE node_id = old.id), old.title);
        INSERT INTO catalogue_node_titles(rowid, title)
            VALUES ((SELECT key FROM catalogue_node_search_keys WHERE node_id = new.id), new.title);
    END""",
    # the nodes written before this migration
    "INSERT INTO catalogue_node_search_keys(node_id) SELECT id FROM catalogue_nodes",
    "INSERT INTO catalogue_node_titles(rowid, title) SELECT k.key, n.title FROM catalogue_node_search_keys k "
    "JOIN catalogue_nodes n ON n.id = k.node_id",
]

# Without the pending list (fastupdate): titles are written rarely and searched often, and
# entries waiting in that list are read by every search until a vacuum merges them (the
# planner, costing that read, then passes the index by).
_CREATE_INDEX = (
    "CREATE INDEX ix_catalogue_nodes_title_trgm ON catalogue_nodes USING gin "
    '(lower(title COLLATE "C") gin_trgm_ops) WITH (fastupdate = off)'
)


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for statement in _SQLITE_UP:
            op.execute(statement)
        return
    savepoint = bind.begin_nested()
    try:
        bind.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
    except sa.exc.DBAPIError as error:
        savepoint.rollback()
        log.warning(
            "pg_trgm cannot be created (%s): title searches of the catalogue will read every "
            "title; a superuser can add the index later: CREATE EXTENSION pg_trgm; %s",
            error.orig,
            _CREATE_INDEX,
        )
        return
    savepoint.commit()
    op.execute(_CREATE_INDEX)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for trigger in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {TITLES}_{trigger}")
        op.execute(f"DROP TABLE IF EXISTS {TITLES}")
        op.execute(f"DROP TABLE IF EXISTS {KEYS}")
        return
    op.execute(f"DROP INDEX IF EXISTS {TRIGRAM_INDEX}")
