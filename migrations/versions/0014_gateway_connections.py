"""gateway connections of the marketplace

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24 23:43:20.119035

A connection names a source type (a connector) and the configuration that reaches one
remote side: the non-secret fields as JSON, the secret ones sealed together
(``sealed_secrets``, Fernet under the server's keys), and the outcome of its last check.
The table starts empty.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import portico.core.db.types

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "gateway_connections",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column(
            "config",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("sealed_secrets", sa.Text(), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "connected",
                "failing",
                name="connectionstatus",
                native_enum=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("last_checked", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name=op.f("fk_gateway_connections_created_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gateway_connections")),
        sa.UniqueConstraint("name", name=op.f("uq_gateway_connections_name")),
    )
    with op.batch_alter_table("gateway_connections", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_gateway_connections_source"), ["source"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("gateway_connections", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_gateway_connections_source"))
    op.drop_table("gateway_connections")
