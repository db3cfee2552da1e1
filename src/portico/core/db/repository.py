"""Repository base: the only place queries are written. One repository per aggregate,
constructed per unit of work with its session."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

from sqlalchemy import ColumnElement, Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.base import Base
from portico.core.pagination import ListQuery, Page, paginate

M = TypeVar("M", bound=Base)


class Repository(Generic[M]):
    model: ClassVar[type[Any]]
    #: public sort key → column, for ListQuery.sort
    sort_columns: ClassVar[Mapping[str, Any]] = {}

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    def select(self) -> Select[M]:
        return select(self.model)

    async def get(self, entity_id: uuid.UUID) -> M | None:
        result: M | None = await self.session.get(self.model, entity_id)
        return result

    async def first(self, statement: Select[M]) -> M | None:
        result: M | None = await self.session.scalar(statement.limit(1))
        return result

    async def all(self, statement: Select[M]) -> list[M]:
        return list(await self.session.scalars(statement))

    async def add(self, entity: M) -> M:
        self.session.add(entity)
        await self.session.flush()
        return entity

    async def delete(self, entity: M) -> None:
        await self.session.delete(entity)
        await self.session.flush()

    async def page(self, statement: Select[M], query: ListQuery) -> Page[M]:
        columns: Mapping[str, ColumnElement[Any]] = self.sort_columns
        return await paginate(
            self.session, statement, query, columns, tiebreaker=self.model.id.asc()
        )
