"""``/users``: portal accounts, their approval, blocking and site roles.

Lists take ``page``, ``limit``, ``sort`` (email, created_at, last_login_at, status; ``-`` for
descending) and ``filter[status]`` (exact), ``filter[email]`` (case-insensitive substring),
``filter[role]`` (an effective site role id).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from portico.core.account import AccountStatus
from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.core.settings import Settings
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.permissions import ROLES_BY_ID
from portico.marketplace.user import service as user_service
from portico.marketplace.user.repository import Account
from portico.marketplace.user.schemas import (
    NOT_BLANK,
    UserBlock,
    UserRead,
    UserReject,
    UserRoles,
)
from portico.marketplace.user.service import UserNotFound

router = APIRouter(prefix="/users", tags=["users"])

_SORTABLE = frozenset({"email", "created_at", "last_login_at", "status"})


def _spec(default_sort: str, filterable: frozenset[str]) -> ListSpec:
    return ListSpec(
        sortable=_SORTABLE,
        default_sort=default_sort,
        filterable=filterable,
        filter_style="bracket",
        size_param="limit",
        default_size=50,
        max_size=500,
    )


LIST = _spec("email", frozenset({"status", "email", "role"}))
# awaiting a decision: the longest waiting first
PENDING = _spec("created_at", frozenset({"email", "role"}))

FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "status": {
        "description": "Accounts in this status.",
        "schema": {"type": "string", "enum": [s.value for s in AccountStatus]},
    },
    "email": {
        "description": "Accounts whose email contains this (case-insensitive).",
        "schema": {"type": "string", "pattern": NOT_BLANK},
    },
    "role": {
        "description": "Accounts that have this site role (GET /roles), directly or not.",
        "schema": {"type": "string", "enum": sorted(ROLES_BY_ID)},
    },
}

UserAdmin = Annotated[SiteCaller, Depends(require("administer users"))]
PermissionAdmin = Annotated[SiteCaller, Depends(require("administer permissions"))]
ApiAdmin = Annotated[SiteCaller, Depends(require("administer marketplace admin api"))]


# the failure only a transition has (marketplace/openapi.py declares the generic ones)
_WRONG_STATUS: dict[int | str, dict[str, Any]] = {
    409: {
        "description": "Not from the account's status (or, to block, your own account or the "
        "bootstrap administrator's); the problem says why."
    }
}


def _read(account: Account) -> Envelope[UserRead]:
    return Envelope(data=UserRead.model_validate(account))


def _base_url(request: Request) -> str:
    settings: Settings = request.app.state.settings
    return settings.public_url or f"http://{settings.listen}"


@router.get(
    "",
    response_model=Collection[UserRead],
    openapi_extra={"parameters": LIST.openapi_parameters(FILTER_PARAMETERS)},
)
async def list_users(
    request: Request,
    _caller: UserAdmin,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(LIST))],
) -> Collection[UserRead]:
    page = await user_service.list_(session=session, query=query)
    return collection(request, page, [UserRead.model_validate(a) for a in page.items])


@router.get(
    "/pending",
    response_model=Collection[UserRead],
    openapi_extra={"parameters": PENDING.openapi_parameters(FILTER_PARAMETERS)},
)
async def list_pending_users(
    request: Request,
    _caller: UserAdmin,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(PENDING))],
) -> Collection[UserRead]:
    """Registrations awaiting approval, oldest first unless sorted otherwise."""
    page = await user_service.list_(session=session, query=query, status=AccountStatus.PENDING)
    return collection(request, page, [UserRead.model_validate(a) for a in page.items])


@router.get("/{user}", response_model=Envelope[UserRead])
async def get_user(user: str, _caller: UserAdmin, session: SessionDep) -> Envelope[UserRead]:
    return _read(await user_service.get(session=session, user_id=parse_uuid(user, UserNotFound)))


@router.post("/{user}/approve", response_model=Envelope[UserRead], responses=_WRONG_STATUS)
async def approve_user(
    user: str, request: Request, caller: UserAdmin, session: SessionDep
) -> Envelope[UserRead]:
    """pending → active; queues the activation email and records a notification."""
    account = await user_service.approve(
        session=session,
        caller=caller,
        user_id=parse_uuid(user, UserNotFound),
        clock=request.app.state.clock,
        base_url=_base_url(request),
    )
    return _read(account)


@router.post("/{user}/reject", response_model=Envelope[UserRead], responses=_WRONG_STATUS)
async def reject_user(
    user: str, body: UserReject, request: Request, caller: UserAdmin, session: SessionDep
) -> Envelope[UserRead]:
    """pending → rejected; the reason is required and kept as ``status_reason``."""
    account = await user_service.reject(
        session=session,
        caller=caller,
        user_id=parse_uuid(user, UserNotFound),
        reason=body.reason,
        clock=request.app.state.clock,
    )
    return _read(account)


@router.post("/{user}/block", response_model=Envelope[UserRead], responses=_WRONG_STATUS)
async def block_user(
    user: str,
    request: Request,
    caller: UserAdmin,
    session: SessionDep,
    body: UserBlock | None = None,
) -> Envelope[UserRead]:
    """active → blocked: the account can no longer sign in and its refresh tokens are
    revoked. Nobody blocks their own account or the bootstrap administrator (409)."""
    account = await user_service.block(
        session=session,
        caller=caller,
        user_id=parse_uuid(user, UserNotFound),
        reason=body.reason if body is not None else None,
        clock=request.app.state.clock,
        refresh_tokens=request.app.state.refresh_tokens,
    )
    return _read(account)


@router.post("/{user}/unblock", response_model=Envelope[UserRead], responses=_WRONG_STATUS)
async def unblock_user(
    user: str, request: Request, caller: UserAdmin, session: SessionDep
) -> Envelope[UserRead]:
    """blocked → active, without any notification or email."""
    account = await user_service.unblock(
        session=session,
        caller=caller,
        user_id=parse_uuid(user, UserNotFound),
        clock=request.app.state.clock,
    )
    return _read(account)


@router.delete("/{user}/firebase-identity", status_code=204, response_class=Response)
async def delete_user_identity(user: str, caller: ApiAdmin, session: SessionDep) -> Response:
    """Sever the account's identity-provider link (404 when it has none)."""
    await user_service.unlink_identity(
        session=session, caller=caller, user_id=parse_uuid(user, UserNotFound)
    )
    return Response(status_code=204)


@router.get("/{user}/roles", response_model=Envelope[UserRoles])
async def get_user_roles(
    user: str, request: Request, _caller: PermissionAdmin, session: SessionDep
) -> Envelope[UserRoles]:
    """Effective site roles and the union of the installed permissions they grant."""
    data = await user_service.roles(
        session=session,
        user_id=parse_uuid(user, UserNotFound),
        available=request.app.state.permissions,
    )
    return Envelope(data=data)
