from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict, Forbidden
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import CallerDep, OrgCaller, member_of_org, require
from portico.management.org import service as org_service
from portico.management.org.schemas import OrganizationCreate, OrganizationRead, OrganizationUpdate
from portico.management.pages import PageRead, page_of

router = APIRouter(prefix="/api/orgs", tags=["organisations"])

LIST = ListSpec(sortable=frozenset({"name", "createdAt"}), default_sort="name")


@router.get("", response_model=PageRead[OrganizationRead])
async def list_orgs(
    caller: CallerDep, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[OrganizationRead]:
    page = await org_service.list_visible(session=session, user=caller.person(), query=query)
    return page_of(page, OrganizationRead)


@router.post(
    "",
    response_model=OrganizationRead,
    status_code=201,
    responses={
        **problems(Forbidden, detail="Only platform administrators create organisations."),
        **problems(Conflict, detail="An organisation already has this name."),
    },
)
async def create_org(
    body: OrganizationCreate, caller: CallerDep, session: SessionDep
) -> OrganizationRead:
    user = caller.person()
    if not user.is_platform_admin:
        raise Forbidden("only platform administrators create organisations")
    org = await org_service.create(session=session, actor=caller.actor, data=body, owner=user)
    return OrganizationRead.model_validate(org)


@router.get("/{orgId}", response_model=OrganizationRead)
async def get_org(
    caller: Annotated[OrgCaller, Depends(member_of_org)], session: SessionDep
) -> OrganizationRead:
    return OrganizationRead.model_validate(
        await org_service.get(session=session, org_id=caller.org_id)
    )


@router.patch(
    "/{orgId}",
    response_model=OrganizationRead,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def update_org(
    body: OrganizationUpdate,
    caller: Annotated[OrgCaller, Depends(require("org.manage"))],
    session: SessionDep,
) -> OrganizationRead:
    org = await org_service.get(session=session, org_id=caller.org_id)
    return OrganizationRead.model_validate(
        await org_service.update(session=session, actor=caller.actor, org=org, data=body)
    )
