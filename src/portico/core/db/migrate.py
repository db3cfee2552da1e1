"""Apply the Alembic migrations (``portico db upgrade``; the tests build schemas this way)."""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path

from alembic import command
from alembic.config import Config


def migrations_dir() -> Path:
    """The packaged copy when installed from a wheel, else the source tree's ``migrations/``."""
    packaged = resources.files("portico") / "migrations"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[4] / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


async def pending(url: str) -> bool:
    """Whether the database at ``url`` is behind the migrations (or has none applied)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    from portico.core.db.engine import build_engine

    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    engine = build_engine(url, pool=False)
    try:
        async with engine.connect() as connection:
            current = await connection.run_sync(
                lambda sync: MigrationContext.configure(sync).get_current_revision()
            )
    finally:
        await engine.dispose()
    return current != head


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


async def upgrade_async(url: str, revision: str = "head") -> None:
    """env.py runs its own event loop, so from async code run it in a worker thread."""
    await asyncio.to_thread(upgrade, url, revision)
