"""catalogue nodes and portal organisations

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25 01:07:39.437319

The marketplace catalogue: one table of nodes for every bundle (APIs, API products,
documentation pages) with their moderation state, visibility and source (custom, or imported
from a gateway connection, unique per connection and remote id so that re-imports update the
same node); the APIs of a product; the organisations and teams an organisation-visible node
is shown to; the portals a node is syndicated to. Portal organisations and teams start with
one organisation, the portal owner's, as the design says a fresh installation has.
"""

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import portico.core.db.types

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "portal_organisations",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column(
            "domains",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_organisations")),
        sa.UniqueConstraint("name", name=op.f("uq_portal_organisations_name")),
    )
    organisations = sa.table(
        "portal_organisations",
        sa.column("id", sa.Uuid()),
        sa.column("name", sa.String()),
        sa.column("domains", sa.JSON()),
        sa.column("created_at", portico.core.db.types.UTCDateTime(timezone=True)),
        sa.column("updated_at", portico.core.db.types.UTCDateTime(timezone=True)),
    )
    now = datetime.now(UTC)
    op.bulk_insert(
        organisations,
        [
            {
                "id": uuid.uuid4(),
                "name": "Portal owner",
                "domains": [],
                "created_at": now,
                "updated_at": now,
            }
        ],
    )
    op.create_table(
        "portal_teams",
        sa.Column("organisation_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organisation_id"],
            ["portal_organisations.id"],
            name=op.f("fk_portal_teams_organisation_id_portal_organisations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_teams")),
        sa.UniqueConstraint(
            "organisation_id", "name", name=op.f("uq_portal_teams_organisation_id_name")
        ),
    )
    with op.batch_alter_table("portal_teams", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_portal_teams_organisation_id"), ["organisation_id"], unique=False
        )

    op.create_table(
        "catalogue_nodes",
        sa.Column(
            "bundle",
            sa.Enum("apis", "api_products", "page", name="bundle", native_enum=False, length=16),
            nullable=False,
        ),
        sa.Column("title", sa.String(length=255), nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("overview", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column(
            "documentation",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "quota",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("organisation_id", sa.Uuid(), nullable=True),
        sa.Column(
            "visibility",
            sa.Enum(
                "public",
                "internal",
                "organisation",
                name="visibility",
                native_enum=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column(
            "moderation_state",
            sa.Enum(
                "draft",
                "in_review",
                "published",
                "archived",
                name="moderationstate",
                native_enum=False,
                length=16,
            ),
            nullable=True,
        ),
        sa.Column("published", sa.Boolean(), nullable=False),
        sa.Column(
            "source_type",
            sa.Enum("custom", "imported", name="sourcetype", native_enum=False, length=16),
            nullable=False,
        ),
        sa.Column("connection_id", sa.Uuid(), nullable=True),
        sa.Column("remote_id", sa.String(length=255), nullable=True),
        sa.Column("remote_uuid", sa.String(length=64), nullable=True),
        sa.Column("remote_revision", sa.String(length=64), nullable=True),
        sa.Column("gateway_type", sa.String(length=64), nullable=True),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["connection_id"],
            ["gateway_connections.id"],
            name=op.f("fk_catalogue_nodes_connection_id_gateway_connections"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name=op.f("fk_catalogue_nodes_created_by_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["organisation_id"],
            ["portal_organisations.id"],
            name=op.f("fk_catalogue_nodes_organisation_id_portal_organisations"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalogue_nodes")),
        sa.UniqueConstraint(
            "connection_id",
            "bundle",
            "remote_id",
            name=op.f("uq_catalogue_nodes_connection_id_bundle_remote_id"),
        ),
    )
    with op.batch_alter_table("catalogue_nodes", schema=None) as batch_op:
        batch_op.create_index(
            "ix_catalogue_nodes_bundle_created", ["bundle", "created_at", "id"], unique=False
        )
        batch_op.create_index(
            "ix_catalogue_nodes_bundle_source",
            ["bundle", "source_type", "title", "id"],
            unique=False,
        )
        batch_op.create_index(
            "ix_catalogue_nodes_bundle_state",
            ["bundle", "moderation_state", "title", "id"],
            unique=False,
        )
        batch_op.create_index(
            "ix_catalogue_nodes_bundle_title", ["bundle", "title", "id"], unique=False
        )
        batch_op.create_index(
            "ix_catalogue_nodes_bundle_updated", ["bundle", "updated_at", "id"], unique=False
        )
        batch_op.create_index(
            "ix_catalogue_nodes_bundle_visibility",
            ["bundle", "visibility", "title", "id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_catalogue_nodes_connection_id"), ["connection_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_catalogue_nodes_organisation_id"), ["organisation_id"], unique=False
        )

    op.create_table(
        "catalogue_node_audiences",
        sa.Column("node_id", sa.Uuid(), nullable=False),
        sa.Column("organisation_id", sa.Uuid(), nullable=False),
        sa.Column("team_id", sa.Uuid(), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["node_id"],
            ["catalogue_nodes.id"],
            name=op.f("fk_catalogue_node_audiences_node_id_catalogue_nodes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organisation_id"],
            ["portal_organisations.id"],
            name=op.f("fk_catalogue_node_audiences_organisation_id_portal_organisations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"],
            ["portal_teams.id"],
            name=op.f("fk_catalogue_node_audiences_team_id_portal_teams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalogue_node_audiences")),
        sa.UniqueConstraint(
            "node_id",
            "organisation_id",
            "team_id",
            name=op.f("uq_catalogue_node_audiences_node_id_organisation_id_team_id"),
        ),
    )
    with op.batch_alter_table("catalogue_node_audiences", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_catalogue_node_audiences_node_id"), ["node_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_catalogue_node_audiences_organisation_id"),
            ["organisation_id"],
            unique=False,
        )

    op.create_table(
        "catalogue_product_apis",
        sa.Column("product_id", sa.Uuid(), nullable=False),
        sa.Column("api_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_id"],
            ["catalogue_nodes.id"],
            name=op.f("fk_catalogue_product_apis_api_id_catalogue_nodes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["catalogue_nodes.id"],
            name=op.f("fk_catalogue_product_apis_product_id_catalogue_nodes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("product_id", "api_id", name=op.f("pk_catalogue_product_apis")),
    )
    with op.batch_alter_table("catalogue_product_apis", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_catalogue_product_apis_api_id"), ["api_id"], unique=False
        )

    op.create_table(
        "catalogue_syndications",
        sa.Column("node_id", sa.Uuid(), nullable=False),
        sa.Column("organisation_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["node_id"],
            ["catalogue_nodes.id"],
            name=op.f("fk_catalogue_syndications_node_id_catalogue_nodes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organisation_id"],
            ["portal_organisations.id"],
            name=op.f("fk_catalogue_syndications_organisation_id_portal_organisations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "node_id", "organisation_id", name=op.f("pk_catalogue_syndications")
        ),
    )
    with op.batch_alter_table("catalogue_syndications", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_catalogue_syndications_organisation_id"),
            ["organisation_id"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("catalogue_syndications", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_catalogue_syndications_organisation_id"))

    op.drop_table("catalogue_syndications")
    with op.batch_alter_table("catalogue_product_apis", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_catalogue_product_apis_api_id"))

    op.drop_table("catalogue_product_apis")
    with op.batch_alter_table("catalogue_node_audiences", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_catalogue_node_audiences_organisation_id"))
        batch_op.drop_index(batch_op.f("ix_catalogue_node_audiences_node_id"))

    op.drop_table("catalogue_node_audiences")
    with op.batch_alter_table("catalogue_nodes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_catalogue_nodes_organisation_id"))
        batch_op.drop_index(batch_op.f("ix_catalogue_nodes_connection_id"))
        batch_op.drop_index("ix_catalogue_nodes_bundle_visibility")
        batch_op.drop_index("ix_catalogue_nodes_bundle_updated")
        batch_op.drop_index("ix_catalogue_nodes_bundle_title")
        batch_op.drop_index("ix_catalogue_nodes_bundle_state")
        batch_op.drop_index("ix_catalogue_nodes_bundle_source")
        batch_op.drop_index("ix_catalogue_nodes_bundle_created")

    op.drop_table("catalogue_nodes")
    with op.batch_alter_table("portal_teams", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_portal_teams_organisation_id"))

    op.drop_table("portal_teams")
    op.drop_table("portal_organisations")
