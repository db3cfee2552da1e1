"""service_account domain: machine identities (integrations, CI) and their bearer tokens."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.pages import PageRead, page_of
from portico.management.service_account import service as service_account_service
from portico.management.service_account.schemas import (
    ServiceAccountCreate,
    ServiceAccountIssued,
    ServiceAccountRead,
    ServiceAccountUpdate,
)
from portico.management.service_account.service import ServiceAccountNotFound

router = APIRouter(prefix="/api/orgs/{orgId}/service-accounts", tags=["service accounts"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt"}),
    default_sort="name",
    filterable=frozenset({"name"}),
)
# Service accounts are identities of the organisation: read and managed as its users are.
Reader = Annotated[OrgCaller, Depends(require("user.read"))]
Manager = Annotated[OrgCaller, Depends(require("user.manage"))]


@router.get("", response_model=PageRead[ServiceAccountRead])
async def list_service_accounts(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[ServiceAccountRead]:
    page = await service_account_service.list_(session=session, caller=caller, query=query)
    return page_of(page, ServiceAccountRead)


@router.post(
    "",
    response_model=ServiceAccountIssued,
    status_code=201,
    responses=problems(Conflict, detail="A service account with this name already exists."),
)
async def create_service_account(
    body: ServiceAccountCreate, caller: Manager, session: SessionDep, request: Request
) -> ServiceAccountIssued:
    """The account and its bearer token, shown this once."""
    issued = await service_account_service.create(
        session=session, caller=caller, data=body, clock=request.app.state.clock
    )
    read = ServiceAccountRead.model_validate(issued.account)
    return ServiceAccountIssued(**read.model_dump(), token=issued.token)


@router.get("/{accountId}", response_model=ServiceAccountRead)
async def get_service_account(
    accountId: str, caller: Reader, session: SessionDep
) -> ServiceAccountRead:
    account = await service_account_service.get(
        session=session, caller=caller, account_id=parse_id(accountId, ServiceAccountNotFound)
    )
    return ServiceAccountRead.model_validate(account)


@router.patch(
    "/{accountId}",
    response_model=ServiceAccountRead,
    responses=problems(Conflict, detail="A service account with this name already exists."),
)
async def update_service_account(
    accountId: str,
    body: ServiceAccountUpdate,
    caller: Manager,
    session: SessionDep,
    request: Request,
) -> ServiceAccountRead:
    account = await service_account_service.update(
        session=session,
        caller=caller,
        account_id=parse_id(accountId, ServiceAccountNotFound),
        data=body,
        clock=request.app.state.clock,
    )
    return ServiceAccountRead.model_validate(account)


@router.delete("/{accountId}", status_code=204)
async def delete_service_account(accountId: str, caller: Manager, session: SessionDep) -> Response:
    """Revokes the token at once."""
    await service_account_service.delete(
        session=session, caller=caller, account_id=parse_id(accountId, ServiceAccountNotFound)
    )
    return Response(status_code=204)
