from __future__ import annotations

from sqlalchemy import ColumnElement

from portico.core.db.repository import OrgScopedRepository
from portico.core.pagination import ListQuery
from portico.management.developer.models import Developer


class DeveloperRepository(OrgScopedRepository[Developer]):
    model = Developer
    sort_columns = {
        "email": Developer.email,
        "lastName": Developer.last_name,
        "createdAt": Developer.created_at,
    }
    name_column = "email"

    def conditions(self, query: ListQuery) -> list[ColumnElement[bool]]:
        conditions = []
        if "email" in query.filters:  # stored lower-cased
            conditions.append(Developer.email == query.filters["email"].strip().lower())
        if "status" in query.filters:
            conditions.append(Developer.status == query.filters["status"])
        return conditions
