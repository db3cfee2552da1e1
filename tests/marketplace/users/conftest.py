"""Fixtures of the users and site-roles tests: a public URL for the links in emails, and
direct access to rows the endpoints write."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from sqlalchemy import select, update

from portico.core.account import User
from portico.core.db.engine import Database
from portico.core.settings import Settings

PUBLIC_URL = "https://portal.example.com/"

Rows = Callable[..., Coroutine[Any, Any, list[Any]]]
Patch = Callable[..., Coroutine[Any, Any, None]]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"public_url": PUBLIC_URL})


@pytest.fixture
def rows(database: Database) -> Rows:
    """All rows of ``model`` matching ``where`` clauses, read in a fresh session."""

    async def read(model: type[Any], *where: Any) -> list[Any]:
        async with database.session() as session:
            return list(await session.scalars(select(model).where(*where)))

    return read


@pytest.fixture
def patch_user(database: Database) -> Patch:
    """Set columns of an account directly (timestamps the endpoints do not write)."""

    async def patch(user_id: uuid.UUID, **values: Any) -> None:
        async with database.session() as session, session.begin():
            await session.execute(update(User).where(User.id == user_id).values(**values))

    return patch
