from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Integer
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from portico.core.db.repository import OrgScopedRepository
from portico.core.pagination import ListQuery
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


class IdentityProviderRepository(OrgScopedRepository[IdentityProvider]):
    model = IdentityProvider
    sort_columns = {
        "name": IdentityProvider.name,
        "createdAt": IdentityProvider.created_at,
        "updatedAt": IdentityProvider.updated_at,
    }
    filter_columns = {"name": IdentityProvider.name}

    def conditions(self, query: ListQuery) -> list[ColumnElement[bool]]:
        """Besides the name, ``active``: the model's rule (at least one mapping) as SQL, so
        that the filter pages and counts in the database."""
        conditions = super().conditions(query)
        active = query.boolean("active")
        if active is not None:
            count = json_array_length(IdentityProvider.mappings)
            conditions.append(count > 0 if active else count == 0)
        return conditions
