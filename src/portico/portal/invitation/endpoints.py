"""``POST /invitations/accept``: an organisation's invitation becomes an active membership.

Open to anonymous callers (the invitee of a new account cannot sign in yet) and to a
signed-in one (an existing account accepting while signed in as itself needs no password).
Each acceptance may verify or hash a password with argon2, so it counts against the
sign-in budget of the client's address.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from portico.core.audit import Actor
from portico.core.db.session import SessionDep
from portico.core.envelope import Envelope
from portico.core.openapi import problems
from portico.marketplace.public import (
    TOKEN_ATTEMPTS,
    InvitationAccepted,
    InvitationInvalid,
    InvitationOwnerUnproven,
    accept_invitation,
    enforce_rate_limit,
)
from portico.portal.access import OptionalDeveloperDep
from portico.portal.invitation.schemas import InvitationAccept
from portico.portal.openapi import OPTIONAL_SECURITY

router = APIRouter(tags=["invitations"])


@router.post(
    "/invitations/accept",
    response_model=Envelope[InvitationAccepted],
    openapi_extra={"security": OPTIONAL_SECURITY},
    responses={
        **problems(
            InvitationInvalid,
            detail="No open invitation has this token: it is wrong, already used or "
            "withdrawn (one answer for all, which says nothing more).",
        ),
        **problems(
            InvitationOwnerUnproven,
            detail="The invited account already exists: sign in as it, or give its "
            "password. (Also any ID token sent that is not valid.)",
        ),
        429: {
            "description": "More than 10 attempts from the address in 5 minutes (sign-ins "
            "count too); `Retry-After` says when to try again."
        },
    },
)
async def accept_organisation_invitation(
    body: InvitationAccept,
    request: Request,
    developer: OptionalDeveloperDep,
    session: SessionDep,
) -> Envelope[InvitationAccepted]:
    """Accept an invitation to an organisation: the membership becomes active; an account
    the invitation created sets its password (and display name) and becomes active, so it
    can sign in."""
    await enforce_rate_limit(request, TOKEN_ATTEMPTS)
    accepted = await accept_invitation(
        session=session,
        token=body.token,
        password=body.password,
        display_name=body.display_name,
        signed_in=None if developer is None else developer.id,
        actor=Actor.anonymous(request),
        clock=request.app.state.clock,
    )
    return Envelope[InvitationAccepted](data=accepted)
