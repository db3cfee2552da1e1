from __future__ import annotations

from fastapi import APIRouter, Request

from portico.core.audit import Actor
from portico.core.db.session import SessionDep
from portico.core.errors import Unauthorized
from portico.core.openapi import problems
from portico.management.access import CallerDep
from portico.management.auth import service as auth_service
from portico.management.auth.schemas import (
    AcceptInvitationRequest,
    LoginRequest,
    MeRead,
    RefreshRequest,
    TokenResponse,
)

router = APIRouter(tags=["auth"])


@router.post(
    "/api/auth/login",
    response_model=TokenResponse,
    responses=problems(Unauthorized, detail="The email or the password is wrong."),
)
async def login(body: LoginRequest, request: Request, session: SessionDep) -> TokenResponse:
    state = request.app.state
    return await auth_service.login(
        session=session,
        tokens=state.access_tokens,
        refresh=state.refresh_tokens,
        email=body.email,
        password=body.password,
        actor=Actor.anonymous(request),
        clock=state.clock,
    )


@router.post(
    "/api/auth/refresh",
    response_model=TokenResponse,
    responses=problems(
        Unauthorized, detail="The refresh token is unknown, expired, revoked or reused."
    ),
)
async def refresh(body: RefreshRequest, request: Request, session: SessionDep) -> TokenResponse:
    state = request.app.state
    return await auth_service.refresh_tokens(
        session=session,
        tokens=state.access_tokens,
        refresh=state.refresh_tokens,
        raw_refresh_token=body.refresh_token,
    )


@router.post(
    "/api/auth/accept-invitation",
    response_model=TokenResponse,
    responses=problems(Unauthorized, detail="The invitation is unknown, expired or used."),
)
async def accept_invitation(
    body: AcceptInvitationRequest, request: Request, session: SessionDep
) -> TokenResponse:
    state = request.app.state
    return await auth_service.accept_invitation(
        session=session,
        tokens=state.access_tokens,
        refresh=state.refresh_tokens,
        raw_token=body.token,
        password=body.password,
        display_name=body.display_name,
        actor=Actor.anonymous(request),
        clock=state.clock,
    )


@router.get("/api/me", response_model=MeRead)
async def get_me(caller: CallerDep, session: SessionDep) -> MeRead:
    return await auth_service.me(session=session, user=caller.person())
