"""Repository bases: the only place queries are written. One repository per aggregate,
constructed per unit of work with its session; it flushes, never commits (the request or the
job owns the transaction)."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
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


class OrgScopedRepository(Repository[M]):
    """The repository of a model that belongs to an organisation (an ``org_id`` column):
    what a caller reads, lists or checks is looked for in its organisation only, so an id of
    another organisation is simply not found.

    ``filter_columns`` maps the list filters a route accepts to the column each one matches
    exactly; a filter whose value needs converting, or that is not an equality, is added by
    overriding :meth:`conditions`. ``name_column`` is the column unique per organisation that
    :meth:`name_taken` checks.
    """

    #: public filter name → column it must equal, for ListQuery.filters
    filter_columns: ClassVar[Mapping[str, Any]] = {}
    #: the attribute, unique within an organisation, that name_taken looks at
    name_column: ClassVar[str] = "name"

    def in_org(self, org_id: uuid.UUID) -> Select[M]:
        return select(self.model).where(self.model.org_id == org_id)

    async def get_in_org(self, org_id: uuid.UUID, entity_id: uuid.UUID) -> M | None:
        return await self.first(self.in_org(org_id).where(self.model.id == entity_id))

    async def many_in_org(self, org_id: uuid.UUID, entity_ids: Collection[uuid.UUID]) -> list[M]:
        """Those of ``entity_ids`` that are in the organisation (none asked, none read)."""
        if not entity_ids:
            return []
        return await self.all(self.in_org(org_id).where(self.model.id.in_(list(entity_ids))))

    async def name_taken(
        self, org_id: uuid.UUID, name: str, *, except_id: uuid.UUID | None = None
    ) -> bool:
        statement = self.in_org(org_id).where(getattr(self.model, self.name_column) == name)
        if except_id is not None:
            statement = statement.where(self.model.id != except_id)
        return await self.first(statement) is not None

    def conditions(self, query: ListQuery) -> list[ColumnElement[bool]]:
        """The WHERE clauses of the query's filters."""
        return [
            self.filter_columns[name] == value
            for name, value in query.filters.items()
            if name in self.filter_columns
        ]

    async def page_in_org(
        self, org_id: uuid.UUID, query: ListQuery, *, within: Select[M] | None = None
    ) -> Page[M]:
        """One page of the organisation's rows that pass the query's filters, sorted as it
        asks; ``within`` narrows the rows first (the org condition is added to it)."""
        statement = self.in_org(org_id) if within is None else within
        if within is not None:
            statement = statement.where(self.model.org_id == org_id)
        return await self.page(statement.where(*self.conditions(query)), query)
