from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.core.settings import Settings
from portico.management.access import OrgCaller, parse_id, require
from portico.management.pages import PageRead, page_of
from portico.management.user import service as user_service
from portico.management.user.schemas import (
    InvitationRead,
    UserInvite,
    UserInvited,
    UserRead,
    UserUpdate,
)
from portico.management.user.service import IssuedInvitation, UserNotFound

router = APIRouter(prefix="/api/orgs/{orgId}/users", tags=["users"])

LIST = ListSpec(
    sortable=frozenset({"email", "createdAt"}),
    default_sort="email",
    filterable=frozenset({"email", "status"}),
)
Reader = Annotated[OrgCaller, Depends(require("user.read"))]
Manager = Annotated[OrgCaller, Depends(require("user.manage"))]


def _invitation(request: Request, issued: IssuedInvitation) -> InvitationRead:
    """The link the inviter passes on (no email is sent yet): the console's page for it,
    which posts the token to /api/auth/accept-invitation. The token rides in the URL's
    fragment, which the browser never sends: it stays out of access logs and Referers."""
    settings: Settings = request.app.state.settings
    base = (settings.public_url or str(request.base_url)).rstrip("/")
    return InvitationRead(
        token=issued.token,
        accept_url=f"{base}/console/accept-invitation#{urlencode({'token': issued.token})}",
        expires_at=issued.expires_at,
    )


@router.get("", response_model=PageRead[UserRead])
async def list_users(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[UserRead]:
    page = await user_service.list_(session=session, caller=caller, query=query)
    return page_of(page, UserRead)


@router.post(
    "",
    response_model=UserInvited,
    status_code=201,
    responses=problems(Conflict, detail="The account is already a member of the organisation."),
)
async def invite_user(
    body: UserInvite, caller: Manager, session: SessionDep, request: Request
) -> UserInvited:
    """Invite by email. The invitation token is in this response only."""
    member, issued = await user_service.invite(
        session=session, caller=caller, data=body, clock=request.app.state.clock
    )
    return UserInvited(
        **dict(UserRead.model_validate(member)), invitation=_invitation(request, issued)
    )


@router.get("/{userId}", response_model=UserRead)
async def get_user(userId: str, caller: Reader, session: SessionDep) -> UserRead:
    member = await user_service.get(
        session=session, caller=caller, user_id=parse_id(userId, UserNotFound)
    )
    return UserRead.model_validate(member)


@router.patch(
    "/{userId}",
    response_model=UserRead,
    responses=problems(Conflict, detail="The organisation must keep at least one Administrator."),
)
async def update_user(
    userId: str, body: UserUpdate, caller: Manager, session: SessionDep
) -> UserRead:
    member = await user_service.update(
        session=session, caller=caller, user_id=parse_id(userId, UserNotFound), data=body
    )
    return UserRead.model_validate(member)


@router.delete(
    "/{userId}",
    status_code=204,
    responses=problems(Conflict, detail="The organisation must keep at least one Administrator."),
)
async def remove_user(userId: str, caller: Manager, session: SessionDep) -> Response:
    await user_service.remove(
        session=session, caller=caller, user_id=parse_id(userId, UserNotFound)
    )
    return Response(status_code=204)


@router.post(
    "/{userId}/invitation",
    response_model=InvitationRead,
    status_code=201,
    responses=problems(
        Conflict, detail="The invitation was already accepted, or the account cannot sign in."
    ),
)
async def reissue_invitation(
    userId: str, caller: Manager, session: SessionDep, request: Request
) -> InvitationRead:
    """A new invitation token for a member who has not accepted yet; the old one stops
    working."""
    issued = await user_service.reissue_invitation(
        session=session,
        caller=caller,
        user_id=parse_id(userId, UserNotFound),
        clock=request.app.state.clock,
    )
    return _invitation(request, issued)
