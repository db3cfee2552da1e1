from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Integer, Select, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from portico.core.db.repository import Repository
from portico.management.identity_provider.models import IdentityProvider


class json_array_length(FunctionElement[int]):  # noqa: N801 — reads as the SQL function
    """Length of a JSON array column: ``json_array_length`` on SQLite, ``jsonb_array_length``
    on PostgreSQL (where ``json_type()`` is JSONB)."""

    type = Integer()
    inherit_cache = True
    name = "json_array_length"


@compiles(json_array_length)
def _json_array_length(element: json_array_length, compiler: SQLCompiler, **kw: Any) -> str:
    return f"json_array_length({compiler.process(element.clauses, **kw)})"


@compiles(json_array_length, "postgresql")
def _jsonb_array_length(element: json_array_length, compiler: SQLCompiler, **kw: Any) -> str:
    return f"jsonb_array_length({compiler.process(element.clauses, **kw)})"


class IdentityProviderRepository(Repository[IdentityProvider]):
    model = IdentityProvider
    sort_columns = {
        "name": IdentityProvider.name,
        "createdAt": IdentityProvider.created_at,
        "updatedAt": IdentityProvider.updated_at,
    }

    def in_org(self, org_id: uuid.UUID) -> Select[IdentityProvider]:
        return select(IdentityProvider).where(IdentityProvider.org_id == org_id)

    @staticmethod
    def where_active(statement: Select[IdentityProvider], active: bool) -> Select[IdentityProvider]:
        """The model's ``active`` rule (at least one mapping) as SQL, so that the filter
        pages and counts in the database."""
        count = json_array_length(IdentityProvider.mappings)
        return statement.where(count > 0 if active else count == 0)

    async def get_in_org(self, org_id: uuid.UUID, idp_id: uuid.UUID) -> IdentityProvider | None:
        return await self.first(self.in_org(org_id).where(IdentityProvider.id == idp_id))

    async def name_taken(
        self, org_id: uuid.UUID, name: str, *, except_id: uuid.UUID | None = None
    ) -> bool:
        statement = self.in_org(org_id).where(IdentityProvider.name == name)
        if except_id is not None:
            statement = statement.where(IdentityProvider.id != except_id)
        return await self.first(statement) is not None
