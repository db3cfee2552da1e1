"""The migrations build exactly the schema the models declare (on the store under test): a
model change without its migration fails here, not in production."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from portico.core.db.engine import Database
from portico.metadata import include_name, metadata


async def test_models_and_migrations_agree(database: Database) -> None:
    def differences(connection: Any) -> list[Any]:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "include_name": include_name}
        )
        return list(compare_metadata(context, metadata))

    async with database.engine.connect() as connection:
        diff = await connection.run_sync(differences)
    assert diff == []
