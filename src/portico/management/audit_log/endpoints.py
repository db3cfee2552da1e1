from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from portico.core.db.session import SessionDep
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, require
from portico.management.audit_log import service as audit_log_service
from portico.management.audit_log.repository import FILTER_COLUMNS
from portico.management.audit_log.schemas import AuditEntryRead
from portico.management.pages import PageRead

router = APIRouter(prefix="/api/orgs/{orgId}/audit-log", tags=["audit"])

LIST = ListSpec(
    sortable=frozenset({"occurredAt"}),
    default_sort="-occurredAt",
    filterable=frozenset(FILTER_COLUMNS),
    default_size=50,
    max_size=500,
)


@router.get("", response_model=PageRead[AuditEntryRead])
async def list_audit_log(
    caller: Annotated[OrgCaller, Depends(require("audit.read"))],
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> PageRead[AuditEntryRead]:
    """The organisation's audit log, newest first."""
    page = await audit_log_service.list_entries(session=session, caller=caller, query=query)
    return PageRead[AuditEntryRead](
        items=[AuditEntryRead.of(e) for e in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )
