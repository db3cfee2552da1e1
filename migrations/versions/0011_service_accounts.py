"""service accounts

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24 16:00:00.000000

Machine identities of an organisation with a hashed bearer token and roles; and the
predefined Integration role, added to every organisation that exists already (new ones get
it from ``PREDEFINED_ROLES``).
"""

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

import portico.core.db.types

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# the role as this migration defines it (PREDEFINED_ROLES may change after it)
INTEGRATION = "Integration"
INTEGRATION_DESCRIPTION = (
    "For a service account of an integration (the marketplace connector, CI): reads APIs, "
    "revisions, products and analytics; manages developers and apps"
)
INTEGRATION_PERMISSIONS = sorted(
    {"api.read", "product.read", "analytics.read", "developer.read", "developer.manage"}
)


def upgrade() -> None:
    op.create_table(
        "service_accounts",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("expires_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name=op.f("fk_service_accounts_created_by_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["orgs.id"],
            name=op.f("fk_service_accounts_org_id_orgs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_service_accounts")),
        sa.UniqueConstraint("org_id", "name", name=op.f("uq_service_accounts_org_id_name")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_service_accounts_token_hash")),
    )
    with op.batch_alter_table("service_accounts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_service_accounts_org_id"), ["org_id"], unique=False)

    op.create_table(
        "service_account_roles",
        sa.Column("service_account_id", sa.Uuid(), nullable=False),
        sa.Column("role_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["role_id"],
            ["roles.id"],
            name=op.f("fk_service_account_roles_role_id_roles"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["service_account_id"],
            ["service_accounts.id"],
            name=op.f("fk_service_account_roles_service_account_id_service_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "service_account_id", "role_id", name=op.f("pk_service_account_roles")
        ),
    )

    # the predefined Integration role in every organisation that has none of that name
    bind = op.get_bind()
    orgs = sa.table("orgs", sa.column("id", sa.Uuid()))
    roles = sa.table(
        "roles",
        sa.column("id", sa.Uuid()),
        sa.column("org_id", sa.Uuid()),
        sa.column("name", sa.String()),
        sa.column("description", sa.String()),
        sa.column("permissions", sa.JSON()),
        sa.column("predefined", sa.Boolean()),
        sa.column("created_at", portico.core.db.types.UTCDateTime(timezone=True)),
        sa.column("updated_at", portico.core.db.types.UTCDateTime(timezone=True)),
    )
    taken = sa.select(roles.c.org_id).where(roles.c.name == INTEGRATION)
    missing = bind.execute(sa.select(orgs.c.id).where(orgs.c.id.not_in(taken))).scalars().all()
    now = datetime.now(UTC)
    if missing:
        op.bulk_insert(
            roles,
            [
                {
                    "id": uuid.uuid4(),
                    "org_id": org_id,
                    "name": INTEGRATION,
                    "description": INTEGRATION_DESCRIPTION,
                    "permissions": list(INTEGRATION_PERMISSIONS),
                    "predefined": True,
                    "created_at": now,
                    "updated_at": now,
                }
                for org_id in missing
            ],
        )


def downgrade() -> None:
    op.drop_table("service_account_roles")
    with op.batch_alter_table("service_accounts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_service_accounts_org_id"))

    op.drop_table("service_accounts")
    roles = sa.table("roles", sa.column("name", sa.String()), sa.column("predefined", sa.Boolean()))
    op.execute(roles.delete().where(roles.c.name == INTEGRATION, roles.c.predefined.is_(True)))
