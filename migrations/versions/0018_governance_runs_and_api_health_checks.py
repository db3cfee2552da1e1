"""governance runs and api health checks

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25 04:46:25.426171

Two tables of the marketplace, both starting empty and both hanging off catalogue nodes
(deleted with them):

* ``governance_runs``: one row per linting run of an API's OpenAPI document (scores, counts,
  ruleset version, document hash, findings), read newest first per API;
* ``api_health_checks``: one row per health check of an API (URL, status, HTTP status,
  latency), read newest first per API.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import portico.core.db.types

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_health_checks",
        sa.Column("node_id", sa.Uuid(), nullable=False),
        sa.Column("checked_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column(
            "trigger",
            sa.Enum("scheduled", "manual", name="checktrigger", native_enum=False, length=16),
            nullable=False,
        ),
        sa.Column(
            "status",
            sa.Enum(
                "up",
                "degraded",
                "down",
                "unknown",
                name="healthstatus",
                native_enum=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("url", sa.String(length=2048), nullable=True),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["node_id"],
            ["catalogue_nodes.id"],
            name=op.f("fk_api_health_checks_node_id_catalogue_nodes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_health_checks")),
    )
    with op.batch_alter_table("api_health_checks", schema=None) as batch_op:
        batch_op.create_index(
            "ix_api_health_checks_node_checked", ["node_id", "checked_at", "id"], unique=False
        )

    op.create_table(
        "governance_runs",
        sa.Column("node_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column(
            "trigger",
            sa.Enum("publish", "import", name="linttrigger", native_enum=False, length=16),
            nullable=False,
        ),
        sa.Column("ruleset_version", sa.String(length=32), nullable=False),
        sa.Column(
            "disabled_rules",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("document_hash", sa.String(length=64), nullable=True),
        sa.Column("valid", sa.Boolean(), nullable=False),
        sa.Column("score_overall", sa.Integer(), nullable=False),
        sa.Column("score_security", sa.Integer(), nullable=False),
        sa.Column("score_style", sa.Integer(), nullable=False),
        sa.Column("score_documentation", sa.Integer(), nullable=False),
        sa.Column(
            "counts",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "findings",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("findings_total", sa.Integer(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["node_id"],
            ["catalogue_nodes.id"],
            name=op.f("fk_governance_runs_node_id_catalogue_nodes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_governance_runs")),
    )
    with op.batch_alter_table("governance_runs", schema=None) as batch_op:
        batch_op.create_index(
            "ix_governance_runs_node_created", ["node_id", "created_at", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("governance_runs", schema=None) as batch_op:
        batch_op.drop_index("ix_governance_runs_node_created")

    op.drop_table("governance_runs")
    with op.batch_alter_table("api_health_checks", schema=None) as batch_op:
        batch_op.drop_index("ix_api_health_checks_node_checked")

    op.drop_table("api_health_checks")
