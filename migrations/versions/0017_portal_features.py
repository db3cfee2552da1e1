"""portal features

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25 04:46:18.578853

The registry of portal features (one per marketplace module, registered by a sync and
marked removed, never deleted, when its module is no longer installed) with its platform
state and settings, and the organisations' overrides. Both tables start empty: ``portico
bootstrap`` and ``POST /features/sync`` fill the registry; until then every feature is on.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import portico.core.db.types

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "portal_features",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column(
            "config",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("removed_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_features")),
        sa.UniqueConstraint("key", name=op.f("uq_portal_features_key")),
    )
    op.create_table(
        "portal_feature_overrides",
        sa.Column("organisation_id", sa.Uuid(), nullable=False),
        sa.Column("feature_id", sa.Uuid(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["feature_id"],
            ["portal_features.id"],
            name=op.f("fk_portal_feature_overrides_feature_id_portal_features"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organisation_id"],
            ["portal_organisations.id"],
            name=op.f("fk_portal_feature_overrides_organisation_id_portal_organisations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_feature_overrides")),
        sa.UniqueConstraint(
            "organisation_id",
            "feature_id",
            name=op.f("uq_portal_feature_overrides_organisation_id_feature_id"),
        ),
    )
    with op.batch_alter_table("portal_feature_overrides", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_portal_feature_overrides_feature_id"), ["feature_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("portal_feature_overrides", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_portal_feature_overrides_feature_id"))
    op.drop_table("portal_feature_overrides")
    op.drop_table("portal_features")
