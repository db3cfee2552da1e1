"""apis revisions deployments

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 02:49:37.267254
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import portico.core.db.types

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "apis",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("description", sa.String(length=256), nullable=False),
        sa.Column("next_revision_number", sa.Integer(), nullable=False),
        sa.Column(
            "spec_document",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"], ["orgs.id"], name=op.f("fk_apis_org_id_orgs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_apis")),
        sa.UniqueConstraint("org_id", "name", name=op.f("uq_apis_org_id_name")),
    )
    with op.batch_alter_table("apis", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_apis_org_id"), ["org_id"], unique=False)

    op.create_table(
        "dataplane_tokens",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("environment_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("last_used_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_dataplane_tokens_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["orgs.id"],
            name=op.f("fk_dataplane_tokens_org_id_orgs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dataplane_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_dataplane_tokens_token_hash")),
    )
    with op.batch_alter_table("dataplane_tokens", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_dataplane_tokens_environment_id"), ["environment_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_dataplane_tokens_org_id"), ["org_id"], unique=False)

    op.create_table(
        "environment_configs",
        sa.Column("environment_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column(
            "config",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("reason", sa.String(length=200), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_environment_configs_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_environment_configs")),
        sa.UniqueConstraint(
            "environment_id", "version", name=op.f("uq_environment_configs_environment_id_version")
        ),
    )
    with op.batch_alter_table("environment_configs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_environment_configs_environment_id"), ["environment_id"], unique=False
        )

    op.create_table(
        "global_plugins",
        sa.Column("environment_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column(
            "config",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_global_plugins_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["org_id"], ["orgs.id"], name=op.f("fk_global_plugins_org_id_orgs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("environment_id", "name", name=op.f("pk_global_plugins")),
    )
    with op.batch_alter_table("global_plugins", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_global_plugins_org_id"), ["org_id"], unique=False)

    op.create_table(
        "revisions",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("api_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column(
            "service_spec",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "route_spec",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_id"], ["apis.id"], name=op.f("fk_revisions_api_id_apis"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name=op.f("fk_revisions_created_by_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["org_id"], ["orgs.id"], name=op.f("fk_revisions_org_id_orgs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_revisions")),
        sa.UniqueConstraint("api_id", "number", name=op.f("uq_revisions_api_id_number")),
    )
    with op.batch_alter_table("revisions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_revisions_api_id"), ["api_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_revisions_org_id"), ["org_id"], unique=False)

    op.create_table(
        "deployments",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("api_id", sa.Uuid(), nullable=False),
        sa.Column("revision_id", sa.Uuid(), nullable=False),
        sa.Column("environment_id", sa.Uuid(), nullable=False),
        sa.Column("deployed_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("deployed_by", sa.Uuid(), nullable=True),
        sa.Column("config_version", sa.Integer(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_id"], ["apis.id"], name=op.f("fk_deployments_api_id_apis"), ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(
            ["deployed_by"],
            ["users.id"],
            name=op.f("fk_deployments_deployed_by_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_deployments_environment_id_environments"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["org_id"], ["orgs.id"], name=op.f("fk_deployments_org_id_orgs"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["revision_id"],
            ["revisions.id"],
            name=op.f("fk_deployments_revision_id_revisions"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deployments")),
        sa.UniqueConstraint(
            "api_id", "environment_id", name=op.f("uq_deployments_api_id_environment_id")
        ),
    )
    with op.batch_alter_table("deployments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_deployments_api_id"), ["api_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_deployments_environment_id"), ["environment_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_deployments_org_id"), ["org_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_deployments_revision_id"), ["revision_id"], unique=False
        )

    op.create_table(
        "upstream_bindings",
        sa.Column("revision_id", sa.Uuid(), nullable=False),
        sa.Column("environment_id", sa.Uuid(), nullable=False),
        sa.Column("upstream_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_upstream_bindings_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["revision_id"],
            ["revisions.id"],
            name=op.f("fk_upstream_bindings_revision_id_revisions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["upstream_id"],
            ["upstreams.id"],
            name=op.f("fk_upstream_bindings_upstream_id_upstreams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("revision_id", "environment_id", name=op.f("pk_upstream_bindings")),
    )
    with op.batch_alter_table("upstream_bindings", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_upstream_bindings_upstream_id"), ["upstream_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("upstream_bindings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_upstream_bindings_upstream_id"))

    op.drop_table("upstream_bindings")
    with op.batch_alter_table("deployments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_deployments_revision_id"))
        batch_op.drop_index(batch_op.f("ix_deployments_org_id"))
        batch_op.drop_index(batch_op.f("ix_deployments_environment_id"))
        batch_op.drop_index(batch_op.f("ix_deployments_api_id"))

    op.drop_table("deployments")
    with op.batch_alter_table("revisions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_revisions_org_id"))
        batch_op.drop_index(batch_op.f("ix_revisions_api_id"))

    op.drop_table("revisions")
    with op.batch_alter_table("global_plugins", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_global_plugins_org_id"))

    op.drop_table("global_plugins")
    with op.batch_alter_table("environment_configs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_environment_configs_environment_id"))

    op.drop_table("environment_configs")
    with op.batch_alter_table("dataplane_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_dataplane_tokens_org_id"))
        batch_op.drop_index(batch_op.f("ix_dataplane_tokens_environment_id"))

    op.drop_table("dataplane_tokens")
    with op.batch_alter_table("apis", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_apis_org_id"))

    op.drop_table("apis")
