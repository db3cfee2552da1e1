"""dataplane nodes

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 03:35:55.114729
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import portico.core.db.types

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "dataplane_nodes",
        sa.Column("environment_id", sa.Uuid(), nullable=False),
        sa.Column("node_id", sa.String(length=128), nullable=False),
        sa.Column("config_version", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=True),
        sa.Column(
            "first_seen_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column("last_seen_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_dataplane_nodes_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("environment_id", "node_id", name=op.f("pk_dataplane_nodes")),
    )


def downgrade() -> None:
    op.drop_table("dataplane_nodes")
