"""the Integration role manages products

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-25 08:00:00.000000

A subscription to an API alone is granted through that API's implied product, which the
marketplace's ``portico`` connector creates and deploys in the management service: the
predefined Integration role (a connector's service account) now also holds
``product.manage``. Every organisation's predefined Integration role is updated; a custom
role of that name is left alone.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

import portico.core.db.types

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INTEGRATION = "Integration"
# the role as this migration leaves it, and as it was before (PREDEFINED_ROLES may change)
BEFORE = (
    "For a service account of an integration (the marketplace connector, CI): reads APIs, "
    "revisions, products and analytics; manages developers and apps",
    sorted({"api.read", "product.read", "analytics.read", "developer.read", "developer.manage"}),
)
AFTER = (
    "For a service account of an integration (the marketplace connector, CI): reads APIs, "
    "revisions, products and analytics; manages developers, apps and the products the "
    "marketplace grants",
    sorted(
        {
            "api.read",
            "product.read",
            "product.manage",
            "analytics.read",
            "developer.read",
            "developer.manage",
        }
    ),
)

_roles = sa.table(
    "roles",
    sa.column("name", sa.String()),
    sa.column("description", sa.String()),
    sa.column("permissions", sa.JSON()),
    sa.column("predefined", sa.Boolean()),
    sa.column("updated_at", portico.core.db.types.UTCDateTime(timezone=True)),
)


def _set(role: tuple[str, list[str]]) -> None:
    description, permissions = role
    op.execute(
        _roles.update()
        .where(_roles.c.name == INTEGRATION, _roles.c.predefined.is_(True))
        .values(description=description, permissions=permissions, updated_at=datetime.now(UTC))
    )


def upgrade() -> None:
    _set(AFTER)


def downgrade() -> None:
    _set(BEFORE)
