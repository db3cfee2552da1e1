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


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


async def upgrade_async(url: str, revision: str = "head") -> None:
    """env.py runs its own event loop, so from async code run it in a worker thread."""
    await asyncio.to_thread(upgrade, url, revision)
