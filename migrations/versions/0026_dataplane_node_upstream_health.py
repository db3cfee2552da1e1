"""dataplane node upstream health

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-26 09:00:00.000000

A gateway node's heartbeat now carries its upstreams' health (``upstreamHealth``: each
upstream's targets as the node's health checker sees them). The last one sent is kept on the
node's row, replaced by each heartbeat, so that ``GET .../upstreams/{id}/health`` and the
console show live health without reaching the nodes. NULL: the node did not report it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("dataplane_nodes") as batch:
        batch.add_column(
            sa.Column(
                "upstream_health",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=True,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("dataplane_nodes") as batch:
        batch.drop_column("upstream_health")
