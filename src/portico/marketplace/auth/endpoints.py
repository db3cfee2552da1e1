"""``/auth/token`` and ``/auth/token/refresh``: the only unauthenticated admin API endpoints.

Both answer 503 ``token-issuance-disabled`` until the identity provider's web API key is set,
and both are rate limited per client address (``ratelimit.py``); the disabled check comes
first, so attempts made before an operator enables issuance do not use up the budget.
Responses are never cached (RFC 6749 §5.1).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, Response

from portico.core.audit import Actor
from portico.core.db.session import SessionDep
from portico.core.envelope import Envelope
from portico.marketplace.auth import service as auth_service
from portico.marketplace.auth.ratelimit import REFRESH_ATTEMPTS, TOKEN_ATTEMPTS, rate_limited
from portico.marketplace.auth.schemas import AdminTokenRequest, RefreshRequest, TokenRead

router = APIRouter(tags=["authentication"])


async def issuance_enabled(request: Request, session: SessionDep) -> None:
    await auth_service.ensure_issuance_enabled(session=session, settings=request.app.state.settings)


def _problems(unauthorized: str, limit: str) -> dict[int | str, dict[str, Any]]:
    return {
        400: {"description": "The body is not valid (the problem names the field)."},
        401: {"description": unauthorized},
        429: {"description": f"{limit}; `Retry-After` says when to try again."},
        503: {"description": "Token issuance is disabled: no web API key is set."},
    }


def _no_store(response: Response) -> None:
    response.headers["Cache-Control"] = "no-store"
    response.headers["Pragma"] = "no-cache"


@router.post(
    "/auth/token",
    response_model=Envelope[TokenRead],
    dependencies=[Depends(issuance_enabled), Depends(rate_limited(TOKEN_ATTEMPTS))],
    responses=_problems(
        "The same answer for an unknown email, a wrong password, and an account that cannot "
        "sign in.",
        "More than 10 attempts from the address in 5 minutes",
    ),
)
async def create_token(
    body: AdminTokenRequest, request: Request, response: Response, session: SessionDep
) -> Envelope[TokenRead]:
    """Exchange an account's email and password, or a SAML sign-in's one-time code, for an
    ID token and a refresh token."""
    state = request.app.state
    if body.saml_code is not None:
        tokens = await auth_service.sign_in_with_saml_code(
            session=session,
            id_tokens=state.id_tokens,
            refresh_tokens=state.refresh_tokens,
            code=body.saml_code,
            verifier=body.code_verifier,
            actor=Actor.anonymous(request),
            clock=state.clock,
        )
        _no_store(response)
        return Envelope(data=tokens)
    assert body.email is not None and body.password is not None  # the schema's rule
    tokens = await auth_service.sign_in(
        session=session,
        id_tokens=state.id_tokens,
        refresh_tokens=state.refresh_tokens,
        email=body.email,
        password=body.password,
        actor=Actor.anonymous(request),
        clock=state.clock,
    )
    _no_store(response)
    return Envelope(data=tokens)


@router.post(
    "/auth/token/refresh",
    response_model=Envelope[TokenRead],
    dependencies=[Depends(issuance_enabled), Depends(rate_limited(REFRESH_ATTEMPTS))],
    responses=_problems(
        "The refresh token is unknown, expired, revoked or already used (reuse revokes every "
        "token of its sign-in), or its account can no longer sign in.",
        "More than 30 refreshes from the address in 5 minutes",
    ),
)
async def refresh_token(
    body: RefreshRequest, request: Request, response: Response, session: SessionDep
) -> Envelope[TokenRead]:
    """Exchange a refresh token for a new ID token and the refresh token's successor."""
    state = request.app.state
    tokens = await auth_service.refresh(
        session=session,
        id_tokens=state.id_tokens,
        refresh_tokens=state.refresh_tokens,
        raw_refresh_token=body.refresh_token,
        actor=Actor.anonymous(request),
    )
    _no_store(response)
    return Envelope(data=tokens)
