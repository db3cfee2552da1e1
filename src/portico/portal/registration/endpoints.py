"""``POST /api/portal/v1/registrations``: public, unauthenticated self-registration.

Rate limited per client address (``REGISTRATIONS``: 5 per 10 minutes, shared through Redis
when configured): each registration costs an argon2 hash and may create an account. Only
well-formed requests count, the limit being checked once the body is valid: a typo in the
form costs nothing, so it must not spend the budget of everyone behind the same address.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from portico.core.audit import Actor
from portico.core.db.session import SessionDep
from portico.core.envelope import Envelope
from portico.marketplace.public import REGISTRATIONS, enforce_rate_limit
from portico.portal.registration import service as registration_service
from portico.portal.registration.schemas import RegistrationAccepted, RegistrationCreate

router = APIRouter(tags=["registration"])


@router.post(
    "/registrations",
    status_code=202,
    response_model=Envelope[RegistrationAccepted],
    responses={
        429: {
            "description": "More than 5 registrations from the address in 10 minutes; "
            "`Retry-After` says when to try again."
        }
    },
)
async def create_registration(
    body: RegistrationCreate, request: Request, session: SessionDep
) -> Envelope[RegistrationAccepted]:
    """Register for a portal account. 202 whether or not the address already had one; a new
    account is pending until an administrator approves it, which emails the applicant."""
    await enforce_rate_limit(request, REGISTRATIONS)
    actor = Actor.anonymous(request)
    await registration_service.register(
        session=session, data=body, clock=request.app.state.clock, actor=actor
    )
    return Envelope(data=RegistrationAccepted(status="pending"))
