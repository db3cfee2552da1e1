"""The migration that adds service accounts gives every existing organisation the predefined
Integration role (new organisations get it from ``PREDEFINED_ROLES``)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa

from portico.core.db.migrate import alembic_config, upgrade
from portico.management.role.permissions import PREDEFINED_ROLES

REVISION = "0011"


def test_existing_organisations_get_the_integration_role(tmp_path: Path) -> None:
    from alembic import command

    path = tmp_path / "store.db"
    upgrade(f"sqlite+aiosqlite:///{path}", f"{REVISION}-1")  # the revision before this one
    engine = sa.create_engine(f"sqlite:///{path}")
    org_id = uuid.uuid4()
    now = datetime.now(UTC)
    orgs = sa.table(
        "orgs",
        sa.column("id", sa.Uuid()),
        sa.column("name", sa.String()),
        sa.column("description", sa.String()),
        sa.column("created_at", sa.DateTime()),
        sa.column("updated_at", sa.DateTime()),
    )
    with engine.begin() as connection:
        connection.execute(
            orgs.insert().values(
                id=org_id, name="before", description="", created_at=now, updated_at=now
            )
        )
    upgrade(f"sqlite+aiosqlite:///{path}", REVISION)
    roles = sa.table(
        "roles",
        sa.column("org_id", sa.Uuid()),
        sa.column("name", sa.String()),
        sa.column("permissions", sa.JSON()),
        sa.column("predefined", sa.Boolean()),
    )
    query = sa.select(roles.c.org_id, roles.c.permissions, roles.c.predefined).where(
        roles.c.name == "Integration"
    )
    with engine.connect() as connection:
        (row,) = connection.execute(query).all()
    assert row.org_id == org_id and row.predefined is True
    # the role as 0011 made it (0022 later adds product.manage)
    assert set(row.permissions) == PREDEFINED_ROLES["Integration"][1] - {"product.manage"}
    command.downgrade(alembic_config(f"sqlite+aiosqlite:///{path}"), f"{REVISION}-1")
    with engine.connect() as connection:
        assert connection.execute(query).all() == []
        assert "service_accounts" not in sa.inspect(connection).get_table_names()
    engine.dispose()


def test_the_integration_role_comes_to_manage_products(tmp_path: Path) -> None:
    from alembic import command

    url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    upgrade(url, "0021")
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'store.db'}")
    now = datetime.now(UTC)
    org_id = uuid.uuid4()
    orgs = sa.table(
        "orgs",
        sa.column("id", sa.Uuid()),
        sa.column("name", sa.String()),
        sa.column("description", sa.String()),
        sa.column("created_at", sa.DateTime()),
        sa.column("updated_at", sa.DateTime()),
    )
    roles = sa.table(
        "roles",
        sa.column("id", sa.Uuid()),
        sa.column("org_id", sa.Uuid()),
        sa.column("name", sa.String()),
        sa.column("description", sa.String()),
        sa.column("permissions", sa.JSON()),
        sa.column("predefined", sa.Boolean()),
        sa.column("created_at", sa.DateTime()),
        sa.column("updated_at", sa.DateTime()),
    )
    before = ["analytics.read", "api.read", "developer.manage", "developer.read", "product.read"]
    with engine.begin() as connection:
        connection.execute(
            orgs.insert().values(
                id=org_id, name="o", description="", created_at=now, updated_at=now
            )
        )
        for name, predefined in (("Integration", True), ("Integration ", False)):
            connection.execute(
                roles.insert().values(
                    id=uuid.uuid4(),
                    org_id=org_id,
                    name=name,
                    description="",
                    permissions=before,
                    predefined=predefined,
                    created_at=now,
                    updated_at=now,
                )
            )
    upgrade(url, "0022")
    query = sa.select(roles.c.predefined, roles.c.permissions).order_by(roles.c.predefined)
    with engine.connect() as connection:
        custom, predefined = connection.execute(query).all()
    assert set(predefined.permissions) == PREDEFINED_ROLES["Integration"][1]
    assert "product.manage" in predefined.permissions
    assert custom.permissions == before  # a custom role is nobody's to change
    command.downgrade(alembic_config(url), "0021")
    with engine.connect() as connection:
        assert {tuple(row.permissions) for row in connection.execute(query)} == {tuple(before)}
    engine.dispose()
