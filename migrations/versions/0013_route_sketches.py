"""hourly sketches merged per route and app, and the hours compacted into them

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24 22:30:00.000000

A percentile query over a day merged every hourly sketch of the day, a row per consumer,
method and status too, though most queries split by none of them. The compaction of closed
hours (``portico.management.analytics.compaction``) writes the same sketches merged without
those three into ``telemetry_sketches_hourly_by_route`` (about a sixth of the rows), and notes
in ``telemetry_sketch_compactions`` what each compacted hour held, so that a query reads them
only while the hour is unchanged. Both start empty: the compaction fills them, and until then
queries read the finer table as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import portico.core.db.types

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_NAMES = (
    "env_name",
    "api_name",
    "route_name",
    "api_path",
    "upstream_path",
    "app_name",
    "developer_email",
    "product_name",
)


def upgrade() -> None:
    op.create_table(
        "telemetry_sketches_hourly_by_route",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("measure", sa.String(length=16), nullable=False),
        sa.Column("hour", portico.core.db.types.UTCDateTime(), nullable=False),
        sa.Column("environment_id", sa.Uuid(), nullable=False),
        sa.Column("api_id", sa.String(length=64), nullable=False),
        sa.Column("route_id", sa.String(length=128), nullable=False),
        sa.Column("app_id", sa.String(length=64), nullable=False),
        sa.Column("product_id", sa.String(length=64), nullable=False),
        sa.Column("developer_id", sa.String(length=64), nullable=False),
        sa.Column("variant", sa.Integer(), nullable=False),
        *(sa.Column(name, sa.Text(), server_default="", nullable=False) for name in _NAMES),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.Column("sketch", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_telemetry_sketches_hourly_by_route_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["orgs.id"],
            name=op.f("fk_telemetry_sketches_hourly_by_route_org_id_orgs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "org_id",
            "measure",
            "hour",
            "environment_id",
            "api_id",
            "route_id",
            "app_id",
            "product_id",
            "developer_id",
            "variant",
            name=op.f("pk_telemetry_sketches_hourly_by_route"),
        ),
        sqlite_with_rowid=False,
    )
    op.create_index(
        "ix_telemetry_sketches_hourly_by_route_env_hour",
        "telemetry_sketches_hourly_by_route",
        ["environment_id", "hour"],
        unique=False,
    )
    op.create_table(
        "telemetry_sketch_compactions",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("hour", portico.core.db.types.UTCDateTime(), nullable=False),
        sa.Column("rows", sa.BigInteger(), nullable=False),
        sa.Column("requests", sa.BigInteger(), nullable=False),
        sa.Column("compacted_at", portico.core.db.types.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["orgs.id"],
            name=op.f("fk_telemetry_sketch_compactions_org_id_orgs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("org_id", "hour", name=op.f("pk_telemetry_sketch_compactions")),
    )


def downgrade() -> None:
    op.drop_table("telemetry_sketch_compactions")
    op.drop_index(
        "ix_telemetry_sketches_hourly_by_route_env_hour",
        table_name="telemetry_sketches_hourly_by_route",
    )
    op.drop_table("telemetry_sketches_hourly_by_route")
