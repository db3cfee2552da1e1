"""data-plane nodes report what discovery found

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-26 10:00:00.000000

A gateway node's heartbeat now carries, for each upstream of its environment with
``discovery``, the nodes it resolved (with when, and the last failure): kept on the node's
row so that the management API shows an upstream's discovered nodes on each data-plane node
(``GET .../upstreams/{upstreamId}/discovered-nodes``). Existing nodes have reported none.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("dataplane_nodes", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "discovery",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=False,
                server_default="{}",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("dataplane_nodes", schema=None) as batch_op:
        batch_op.drop_column("discovery")
