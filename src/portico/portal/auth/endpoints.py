"""``POST /auth/token`` and ``POST /auth/token/refresh``: the same bodies, answers, rate
limits (the same budgets: an attempt here counts where one on the admin API does) and
problems as the admin API's, served by the same service (``marketplace.public``): a
developer's ID token is an admin API token, and the portal only reads it.

Both answer 503 ``token-issuance-disabled`` until the identity provider's web API key is
set, checked before the rate limit so that attempts made before an operator enables
issuance do not use up the budget. Responses are never cached (RFC 6749 §5.1).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, Response

from portico.core.audit import Actor
from portico.core.db.session import SessionDep
from portico.core.envelope import Envelope
from portico.marketplace.public import (
    REFRESH_ATTEMPTS,
    TOKEN_ATTEMPTS,
    RefreshRequest,
    TokenIssuer,
    TokenRead,
    TokenRequest,
    ensure_issuance_enabled,
    rate_limited,
)

router = APIRouter(tags=["authentication"])


async def issuance_enabled(request: Request, session: SessionDep) -> None:
    await ensure_issuance_enabled(session=session, settings=request.app.state.settings)


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


def _issuer(request: Request) -> TokenIssuer:
    issuer: TokenIssuer = request.app.state.token_issuer
    return issuer


@router.post(
    "/auth/token",
    response_model=Envelope[TokenRead],
    dependencies=[Depends(issuance_enabled), Depends(rate_limited(TOKEN_ATTEMPTS))],
    responses=_problems(
        "The same answer for an unknown email, a wrong password, and an account that cannot "
        "sign in.",
        "More than 10 attempts from the address in 5 minutes (the admin API's count too)",
    ),
)
async def create_token(
    body: TokenRequest, request: Request, response: Response, session: SessionDep
) -> Envelope[TokenRead]:
    """Exchange an account's email and password for an ID token and a refresh token."""
    tokens = await _issuer(request).sign_in(
        session,
        email=body.email,
        password=body.password,
        actor=Actor.anonymous(request),
        clock=request.app.state.clock,
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
        "More than 30 refreshes from the address in 5 minutes (the admin API's count too)",
    ),
)
async def refresh_token(
    body: RefreshRequest, request: Request, response: Response, session: SessionDep
) -> Envelope[TokenRead]:
    """Exchange a refresh token for a new ID token and the refresh token's successor."""
    tokens = await _issuer(request).refresh(
        session, refresh_token=body.refresh_token, actor=Actor.anonymous(request)
    )
    _no_store(response)
    return Envelope(data=tokens)
