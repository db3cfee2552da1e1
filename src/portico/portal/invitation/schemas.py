"""The body of an invitation's acceptance (snake_case, strict)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from portico.core.schema import PlainWriteSchema
from portico.portal.registration.schemas import PASSWORD_MAX_LENGTH, clean_display_name


class InvitationAccept(PlainWriteSchema):
    token: str = Field(
        min_length=1, max_length=512, description="The token of the invitation email's link."
    )
    password: str | None = Field(
        None,
        min_length=1,
        max_length=PASSWORD_MAX_LENGTH,
        description="An account the invitation created chooses its password here (at least "
        "12 characters; required then). An existing account gives its own password, unless "
        "the request is signed in as it.",
    )
    display_name: (
        Annotated[str, Field(max_length=200), AfterValidator(clean_display_name)] | None
    ) = Field(None, description="The name shown for the account (unchanged when left out).")
