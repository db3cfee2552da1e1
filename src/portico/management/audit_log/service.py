from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.audit import AuditEntry
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller
from portico.management.audit_log.repository import AuditLogRepository


async def list_entries(
    *, session: AsyncSession, caller: OrgCaller, query: ListQuery
) -> Page[AuditEntry]:
    repository = AuditLogRepository(session)
    return await repository.page(repository.of_org(caller.org_id, query.filters), query)
