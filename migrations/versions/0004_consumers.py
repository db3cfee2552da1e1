"""consumers

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 03:22:04.029695
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import portico.core.db.types

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "consumers",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("description", sa.String(length=256), nullable=False),
        sa.Column(
            "plugins",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"], ["orgs.id"], name=op.f("fk_consumers_org_id_orgs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_consumers")),
        sa.UniqueConstraint("org_id", "username", name=op.f("uq_consumers_org_id_username")),
    )
    with op.batch_alter_table("consumers", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_consumers_org_id"), ["org_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("consumers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_consumers_org_id"))

    op.drop_table("consumers")
