"""SAML sign-in: just-in-time provisioning per configuration, and what a sign-in keeps

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-28 23:30:00.000000

``identity_providers.jit_provisioning`` (false for every existing configuration: nothing
changes for them) and ``metadata_url`` (where the IdP's facts were read from, if they were). ``saml_requests`` holds the AuthnRequests this service issued (a Response
is accepted once, in answer to one of them, before it expires), ``saml_assertions_used`` the
ids of assertions already used (kept until their NotOnOrAfter: a replay is refused), and
``saml_sign_in_codes`` the one-time codes a sign-in hands to the browser, which exchanges one
for its tokens (hashed; a minute to live).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from portico.core.db.types import UTCDateTime

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("identity_providers") as batch:
        batch.add_column(
            sa.Column("jit_provisioning", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch.add_column(sa.Column("metadata_url", sa.String(length=2048), nullable=True))
    op.create_table(
        "saml_requests",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("idp_id", sa.Uuid(), nullable=False),
        sa.Column("target", sa.String(length=16), nullable=False),
        sa.Column("challenge", sa.String(length=64), nullable=True),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("used_at", UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_saml_requests")),
    )
    op.create_index(op.f("ix_saml_requests_expires_at"), "saml_requests", ["expires_at"])
    op.create_table(
        "saml_assertions_used",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_saml_assertions_used")),
    )
    op.create_index(
        op.f("ix_saml_assertions_used_expires_at"), "saml_assertions_used", ["expires_at"]
    )
    op.create_table(
        "saml_sign_in_codes",
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("target", sa.String(length=16), nullable=False),
        sa.Column("challenge", sa.String(length=64), nullable=True),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_saml_sign_in_codes_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("code_hash", name=op.f("pk_saml_sign_in_codes")),
    )
    op.create_index(op.f("ix_saml_sign_in_codes_expires_at"), "saml_sign_in_codes", ["expires_at"])
    op.create_index(op.f("ix_saml_sign_in_codes_user_id"), "saml_sign_in_codes", ["user_id"])


def downgrade() -> None:
    op.drop_table("saml_sign_in_codes")
    op.drop_table("saml_assertions_used")
    op.drop_table("saml_requests")
    with op.batch_alter_table("identity_providers") as batch:
        batch.drop_column("metadata_url")
        batch.drop_column("jit_provisioning")
