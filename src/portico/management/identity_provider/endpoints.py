from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.egress import EgressGuard
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.core.settings import Settings
from portico.management.access import OrgCaller, parse_id, require
from portico.management.identity_provider import service as identity_provider_service
from portico.management.identity_provider.schemas import (
    IdentityProviderCreate,
    IdentityProviderRead,
    IdentityProviderSummary,
    IdentityProviderUpdate,
)
from portico.management.identity_provider.service import IdentityProviderNotFound
from portico.management.pages import PageRead, page_of

router = APIRouter(prefix="/api/orgs/{orgId}/identity-providers", tags=["identity providers"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt", "updatedAt"}),
    default_sort="name",
    filterable=frozenset({"name", "active"}),
)
Reader = Annotated[OrgCaller, Depends(require("idp.read"))]


def _guard(request: Request) -> EgressGuard:
    """What ``metadataUrl`` may reach: public addresses, and the internal ranges the
    operator allowed (``PORTICO_MANAGEMENT_EGRESS_ALLOW``)."""
    settings: Settings = request.app.state.settings
    return EgressGuard.allowing(settings.management_egress_allow)


Manager = Annotated[OrgCaller, Depends(require("idp.manage"))]


@router.get("", response_model=PageRead[IdentityProviderSummary])
async def list_identity_providers(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[IdentityProviderSummary]:
    page = await identity_provider_service.list_(session=session, caller=caller, query=query)
    return page_of(page, IdentityProviderSummary)


@router.post(
    "",
    response_model=IdentityProviderRead,
    status_code=201,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def create_identity_provider(
    body: IdentityProviderCreate, caller: Manager, session: SessionDep, request: Request
) -> IdentityProviderRead:
    idp = await identity_provider_service.create(
        session=session, caller=caller, data=body, guard=_guard(request)
    )
    return IdentityProviderRead.model_validate(idp)


@router.get("/{idpId}", response_model=IdentityProviderRead)
async def get_identity_provider(
    idpId: str, caller: Reader, session: SessionDep
) -> IdentityProviderRead:
    idp = await identity_provider_service.get(
        session=session, caller=caller, idp_id=parse_id(idpId, IdentityProviderNotFound)
    )
    return IdentityProviderRead.model_validate(idp)


@router.patch(
    "/{idpId}",
    response_model=IdentityProviderRead,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def update_identity_provider(
    idpId: str,
    body: IdentityProviderUpdate,
    caller: Manager,
    session: SessionDep,
    request: Request,
) -> IdentityProviderRead:
    idp = await identity_provider_service.update(
        session=session,
        caller=caller,
        idp_id=parse_id(idpId, IdentityProviderNotFound),
        data=body,
        guard=_guard(request),
    )
    return IdentityProviderRead.model_validate(idp)


@router.delete("/{idpId}", status_code=204)
async def delete_identity_provider(idpId: str, caller: Manager, session: SessionDep) -> Response:
    await identity_provider_service.delete(
        session=session, caller=caller, idp_id=parse_id(idpId, IdentityProviderNotFound)
    )
    return Response(status_code=204)
