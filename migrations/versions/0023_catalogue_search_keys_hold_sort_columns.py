"""SQLite: the catalogue's search keys hold what a search page is ordered by

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-25 13:30:00.000000

A title search on SQLite finds its candidates through the FTS index (migration 0016), then
read each candidate's node row for its bundle, title and sort columns: a random read of a
wide row per candidate, two thirds of the query when a word is in a few thousand titles.
The key table now holds a copy of those columns (bundle, title, created, updated, moderation
state), kept by the same triggers, so that a search filtered on nothing else is found,
counted and ordered from the keys alone. PostgreSQL is untouched (its trigram index is on
the nodes table itself).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEYS = "catalogue_node_search_keys"
#: the copied columns, with the types of the nodes' own (same stored values, same order)
COPIED = (
    ("bundle", "VARCHAR(16)"),
    ("title", "VARCHAR(255)"),
    ("created_at", "DATETIME"),
    ("updated_at", "DATETIME"),
    ("moderation_state", "VARCHAR(16)"),
)

# written out rather than composed: the statements read as they run
_UP = [
    *(f"ALTER TABLE {KEYS} ADD COLUMN {name} {type_}" for name, type_ in COPIED),
    """UPDATE catalogue_node_search_keys
        SET (bundle, title, created_at, updated_at, moderation_state) = (
            SELECT bundle, title, created_at, updated_at, moderation_state
            FROM catalogue_nodes n WHERE n.id = catalogue_node_search_keys.node_id)""",
    "DROP TRIGGER catalogue_node_titles_insert",
    """CREATE TRIGGER catalogue_node_titles_insert AFTER INSERT ON catalogue_nodes BEGIN
        INSERT INTO catalogue_node_search_keys(
            node_id, bundle, title, created_at, updated_at, moderation_state)
            VALUES (new.id, new.bundle, new.title, new.created_at, new.updated_at,
                    new.moderation_state);
        INSERT INTO catalogue_node_titles(rowid, title)
            VALUES ((SELECT key FROM catalogue_node_search_keys WHERE node_id = new.id), new.title);
    END""",
    """CREATE TRIGGER catalogue_node_search_keys_update
    AFTER UPDATE OF bundle, title, created_at, updated_at, moderation_state ON catalogue_nodes
    BEGIN
        UPDATE catalogue_node_search_keys
            SET (bundle, title, created_at, updated_at, moderation_state) = (
                new.bundle, new.title, new.created_at, new.updated_at, new.moderation_state)
            WHERE node_id = new.id;
    END""",
]

_DOWN = [
    "DROP TRIGGER catalogue_node_search_keys_update",
    "DROP TRIGGER catalogue_node_titles_insert",
    """CREATE TRIGGER catalogue_node_titles_insert AFTER INSERT ON catalogue_nodes BEGIN
        INSERT INTO catalogue_node_search_keys(node_id) VALUES (new.id);
        INSERT INTO catalogue_node_titles(rowid, title)
            VALUES ((SELECT key FROM catalogue_node_search_keys WHERE node_id = new.id), new.title);
    END""",
    *(f"ALTER TABLE {KEYS} DROP COLUMN {name}" for name, _ in reversed(COPIED)),
]


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for statement in _UP:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for statement in _DOWN:
        op.execute(statement)
