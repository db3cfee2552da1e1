"""developer apps and subscriptions

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-25 06:55:00.000000

Developer apps: a portal account's app with its key-auth key sealed at rest (shown once), and
what was made for it on each gateway connection (``developer_app_remotes``: the remote
developer and app per connection and remote environment, with the remote work still owed to
them and its retries; a row outlives its app until the remote app is deleted).

Subscriptions: an app's access to an API or product node, its status and reason, and the
remote work owed for it (give or take back access) with a due time swept by the worker's
schedule, the attempts and the last error. Subscriptions outlive their app and node (both set
to NULL, their names kept).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import portico.core.db.types

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _when(name: str, *, nullable: bool) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, portico.core.db.types.UTCDateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "developer_apps",
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("sealed_key", sa.Text(), nullable=False),
        sa.Column("key_hint", sa.String(length=8), nullable=False),
        _when("key_issued_at", nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        _when("created_at", nullable=False),
        _when("updated_at", nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_developer_apps_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_developer_apps")),
        sa.UniqueConstraint("owner_id", "name", name=op.f("uq_developer_apps_owner_id_name")),
    )
    op.create_table(
        "developer_app_remotes",
        sa.Column("app_id", sa.Uuid(), nullable=True),
        sa.Column("connection_id", sa.Uuid(), nullable=False),
        sa.Column("environment_id", sa.String(length=64), nullable=False),
        sa.Column("remote_developer_id", sa.String(length=64), nullable=False),
        sa.Column("remote_app_id", sa.String(length=64), nullable=False),
        sa.Column(
            "work",
            sa.Enum("none", "set_key", "remove", name="remotework", native_enum=False, length=16),
            nullable=False,
        ),
        _when("due_at", nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        _when("created_at", nullable=False),
        _when("updated_at", nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"],
            ["developer_apps.id"],
            name=op.f("fk_developer_app_remotes_app_id_developer_apps"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["connection_id"],
            ["gateway_connections.id"],
            name=op.f("fk_developer_app_remotes_connection_id_gateway_connections"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_developer_app_remotes")),
        sa.UniqueConstraint(
            "app_id",
            "connection_id",
            "environment_id",
            name=op.f("uq_developer_app_remotes_app_id_connection_id_environment_id"),
        ),
    )
    with op.batch_alter_table("developer_app_remotes", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_developer_app_remotes_app_id"), ["app_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_developer_app_remotes_connection_id"), ["connection_id"], unique=False
        )
        batch_op.create_index("ix_developer_app_remotes_due_at", ["due_at"], unique=False)

    op.create_table(
        "subscriptions",
        sa.Column("app_id", sa.Uuid(), nullable=True),
        sa.Column("app_name", sa.String(length=100), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=True),
        sa.Column("node_id", sa.Uuid(), nullable=True),
        sa.Column("node_bundle", sa.String(length=16), nullable=False),
        sa.Column("node_title", sa.String(length=255), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "pending",
                "provisioning",
                "active",
                "rejected",
                "revoked",
                "cancelled",
                name="subscriptionstatus",
                native_enum=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("reason", sa.Text(), nullable=True),
        _when("requested_at", nullable=False),
        _when("decided_at", nullable=True),
        sa.Column("decided_by", sa.Uuid(), nullable=True),
        _when("activated_at", nullable=True),
        _when("ended_at", nullable=True),
        sa.Column("connection_id", sa.Uuid(), nullable=True),
        sa.Column("remote_target_id", sa.String(length=255), nullable=True),
        sa.Column("remote_product_id", sa.String(length=64), nullable=True),
        sa.Column("remote_id", sa.Uuid(), nullable=True),
        sa.Column(
            "remote_action",
            sa.Enum("none", "grant", "withdraw", name="remoteaction", native_enum=False, length=16),
            nullable=False,
        ),
        sa.Column("remote_generation", sa.Integer(), nullable=False),
        _when("due_at", nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        _when("last_attempt_at", nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        _when("created_at", nullable=False),
        _when("updated_at", nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"],
            ["developer_apps.id"],
            name=op.f("fk_subscriptions_app_id_developer_apps"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["connection_id"],
            ["gateway_connections.id"],
            name=op.f("fk_subscriptions_connection_id_gateway_connections"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["decided_by"],
            ["users.id"],
            name=op.f("fk_subscriptions_decided_by_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["node_id"],
            ["catalogue_nodes.id"],
            name=op.f("fk_subscriptions_node_id_catalogue_nodes"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_subscriptions_owner_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["remote_id"],
            ["developer_app_remotes.id"],
            name=op.f("fk_subscriptions_remote_id_developer_app_remotes"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_subscriptions")),
    )
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_subscriptions_app_id"), ["app_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_subscriptions_connection_id"), ["connection_id"], unique=False
        )
        batch_op.create_index("ix_subscriptions_due_at", ["due_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_subscriptions_node_id"), ["node_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_subscriptions_owner_id"), ["owner_id"], unique=False)
        batch_op.create_index(
            "ix_subscriptions_status_requested", ["status", "requested_at", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_index("ix_subscriptions_status_requested")
        batch_op.drop_index(batch_op.f("ix_subscriptions_owner_id"))
        batch_op.drop_index(batch_op.f("ix_subscriptions_node_id"))
        batch_op.drop_index("ix_subscriptions_due_at")
        batch_op.drop_index(batch_op.f("ix_subscriptions_connection_id"))
        batch_op.drop_index(batch_op.f("ix_subscriptions_app_id"))

    op.drop_table("subscriptions")
    with op.batch_alter_table("developer_app_remotes", schema=None) as batch_op:
        batch_op.drop_index("ix_developer_app_remotes_due_at")
        batch_op.drop_index(batch_op.f("ix_developer_app_remotes_connection_id"))
        batch_op.drop_index(batch_op.f("ix_developer_app_remotes_app_id"))

    op.drop_table("developer_app_remotes")
    op.drop_table("developer_apps")
