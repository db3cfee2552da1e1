"""secret store and the secrets deployments resolved

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-26 12:00:00.000000

The organisation's secret store (``secrets``: a name and its value, encrypted), the secrets
each deployment resolved for its plugins (``deployments.sealed_secrets``: sealed for
gateways, so that every snapshot it is published in carries the same value), and the store's
permissions on the predefined roles of every organisation that exists already (new ones get
them from ``PREDEFINED_ROLES``): Administrator both, API Publisher both, Viewer
``secret.read``.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import portico.core.db.types

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: what each predefined role gains (as this migration defines it)
GRANTS = {
    "Administrator": ("secret.read", "secret.manage"),
    "API Publisher": ("secret.read", "secret.manage"),
    "Viewer": ("secret.read",),
}

_roles = sa.table(
    "roles",
    sa.column("id", sa.Uuid()),
    sa.column("name", sa.String()),
    sa.column("permissions", sa.JSON()),
    sa.column("predefined", sa.Boolean()),
    sa.column("updated_at", portico.core.db.types.UTCDateTime(timezone=True)),
)


def _regrant(add: bool) -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(_roles.c.id, _roles.c.name, _roles.c.permissions).where(
            _roles.c.predefined.is_(True), _roles.c.name.in_(list(GRANTS))
        )
    ).all()
    now = datetime.now(UTC)
    for role_id, name, permissions in rows:
        held = set(permissions or [])
        changed = held | set(GRANTS[name]) if add else held - set(GRANTS[name])
        bind.execute(
            _roles.update()
            .where(_roles.c.id == role_id)
            .values(permissions=sorted(changed), updated_at=now)
        )


def upgrade() -> None:
    op.create_table(
        "secrets",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value_encrypted", sa.Text(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"], ["orgs.id"], name=op.f("fk_secrets_org_id_orgs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_secrets")),
        sa.UniqueConstraint("org_id", "name", name=op.f("uq_secrets_org_id_name")),
    )
    with op.batch_alter_table("secrets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_secrets_org_id"), ["org_id"], unique=False)

    with op.batch_alter_table("deployments", schema=None) as batch_op:
        # existing deployments resolved nothing: their plugins named no reference
        batch_op.add_column(
            sa.Column(
                "sealed_secrets",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=False,
                server_default="{}",
            )
        )
    _regrant(add=True)


def downgrade() -> None:
    _regrant(add=False)
    with op.batch_alter_table("deployments", schema=None) as batch_op:
        batch_op.drop_column("sealed_secrets")
    with op.batch_alter_table("secrets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_secrets_org_id"))
    op.drop_table("secrets")
