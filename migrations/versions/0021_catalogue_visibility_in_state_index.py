"""catalogue visibility in the state index

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-25 08:00:00.000000

The developer portal counts, pages and searches only the published nodes its caller may see
(``moderation_state = 'published'`` and a test of the visibility, marketplace/storefront/).
The state index ``(bundle, moderation_state, title, id)`` found the published nodes, but the
visibility of each was read from its row: at 100,000 nodes a count read some 50,000 rows one
by one (SQLite) or the whole table (PostgreSQL), 50 to 150 ms. With ``visibility`` last in
the same index, the count reads the index alone and the title order keeps its index. The
state index is replaced rather than joined by another: the admin API's state order and
state filters read the same leading columns in the same order, and with both SQLite would
keep choosing the narrower one, which does not cover the test.

SQLite plans from the statistics of ``ANALYZE``: a store that has them gets them for the new
index too (without them, the planner would judge it by defaults against indexes it knows).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "catalogue_nodes"
OLD = "ix_catalogue_nodes_bundle_state"
NEW = "ix_catalogue_nodes_bundle_state_visibility"


def _analyze_sqlite() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    analyzed = bind.execute(
        sa.text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'")
    ).first()
    if analyzed is not None:
        op.execute(f"ANALYZE {TABLE}")


def upgrade() -> None:
    op.create_index(NEW, TABLE, ["bundle", "moderation_state", "title", "id", "visibility"])
    op.drop_index(OLD, table_name=TABLE)
    _analyze_sqlite()


def downgrade() -> None:
    op.create_index(OLD, TABLE, ["bundle", "moderation_state", "title", "id"])
    op.drop_index(NEW, table_name=TABLE)
    _analyze_sqlite()
