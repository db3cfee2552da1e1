"""portal memberships, teams and roles

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-25 04:43:10.054976

Who belongs to a portal organisation: a membership (the seed's ``{relationship}``) links an
account to an organisation with a status (invited, pending approval of a partner
registration, active, rejected with its reason); team memberships hang off it, so removing a
member from the organisation removes them from its teams. The account itself is never
touched by removing a membership.

Organisation roles: an organisation's custom roles (a label and the organisation permissions
they grant; the predefined org-admin and org-member are code, not rows), and the roles held
directly by a member or through a team (a predefined role's id or a custom role's id as text).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import portico.core.db.types

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "portal_memberships",
        sa.Column("organisation_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "invited",
                "pending",
                "active",
                "rejected",
                name="membershipstatus",
                native_enum=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column(
            "status_changed_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column("invited_by", sa.Uuid(), nullable=True),
        sa.Column("invitation_token_hash", sa.String(length=64), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["invited_by"],
            ["users.id"],
            name=op.f("fk_portal_memberships_invited_by_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["organisation_id"],
            ["portal_organisations.id"],
            name=op.f("fk_portal_memberships_organisation_id_portal_organisations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_portal_memberships_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_memberships")),
        sa.UniqueConstraint(
            "invitation_token_hash", name=op.f("uq_portal_memberships_invitation_token_hash")
        ),
        sa.UniqueConstraint(
            "organisation_id", "user_id", name=op.f("uq_portal_memberships_organisation_id_user_id")
        ),
    )
    with op.batch_alter_table("portal_memberships", schema=None) as batch_op:
        batch_op.create_index(
            "ix_portal_memberships_organisation_status", ["organisation_id", "status"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_portal_memberships_user_id"), ["user_id"], unique=False
        )

    op.create_table(
        "portal_team_members",
        sa.Column("team_id", sa.Uuid(), nullable=False),
        sa.Column("membership_id", sa.Uuid(), nullable=False),
        sa.Column("added_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["membership_id"],
            ["portal_memberships.id"],
            name=op.f("fk_portal_team_members_membership_id_portal_memberships"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"],
            ["portal_teams.id"],
            name=op.f("fk_portal_team_members_team_id_portal_teams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("team_id", "membership_id", name=op.f("pk_portal_team_members")),
    )
    with op.batch_alter_table("portal_team_members", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_portal_team_members_membership_id"), ["membership_id"], unique=False
        )

    op.create_table(
        "portal_organisation_roles",
        sa.Column("organisation_id", sa.Uuid(), nullable=False),
        sa.Column("label", sa.String(length=100), nullable=False),
        sa.Column(
            "permissions",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organisation_id"],
            ["portal_organisations.id"],
            name=op.f("fk_portal_organisation_roles_organisation_id_portal_organisations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_organisation_roles")),
        sa.UniqueConstraint(
            "organisation_id",
            "label",
            name=op.f("uq_portal_organisation_roles_organisation_id_label"),
        ),
    )
    op.create_table(
        "portal_member_roles",
        sa.Column("membership_id", sa.Uuid(), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["membership_id"],
            ["portal_memberships.id"],
            name=op.f("fk_portal_member_roles_membership_id_portal_memberships"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("membership_id", "role", name=op.f("pk_portal_member_roles")),
    )
    with op.batch_alter_table("portal_member_roles", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_portal_member_roles_role"), ["role"], unique=False)

    op.create_table(
        "portal_team_roles",
        sa.Column("team_id", sa.Uuid(), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"],
            ["portal_teams.id"],
            name=op.f("fk_portal_team_roles_team_id_portal_teams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("team_id", "role", name=op.f("pk_portal_team_roles")),
    )
    with op.batch_alter_table("portal_team_roles", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_portal_team_roles_role"), ["role"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("portal_team_roles", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_portal_team_roles_role"))

    op.drop_table("portal_team_roles")
    with op.batch_alter_table("portal_member_roles", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_portal_member_roles_role"))

    op.drop_table("portal_member_roles")
    op.drop_table("portal_organisation_roles")
    with op.batch_alter_table("portal_team_members", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_portal_team_members_membership_id"))

    op.drop_table("portal_team_members")
    with op.batch_alter_table("portal_memberships", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_portal_memberships_user_id"))
        batch_op.drop_index("ix_portal_memberships_organisation_status")

    op.drop_table("portal_memberships")
