"""memberships.accepted_at: a membership created by an invitation grants nothing until accepted

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 02:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import portico.core.db.types

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("memberships", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "accepted_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=True
            )
        )
    # Memberships that existed before were effective: keep them so, except those whose
    # account has not accepted its invitation yet.
    op.execute(
        "UPDATE memberships SET accepted_at = created_at WHERE user_id IN "
        "(SELECT id FROM users WHERE status <> 'invited')"
    )


def downgrade() -> None:
    with op.batch_alter_table("memberships", schema=None) as batch_op:
        batch_op.drop_column("accepted_at")
