"""HTTP shapes of portal self-registration (snake_case, like the admin API)."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from email_validator import EmailNotValidError, validate_email
from pydantic import AfterValidator, Field

from portico.core.account import EMAIL_MAX_LENGTH, normalise_email
from portico.core.schema import PlainReadSchema, PlainWriteSchema

PASSWORD_MIN_LENGTH = 12
# argon2 would hash a megabyte happily; a cap keeps one request from costing much more than
# another (and nobody types more)
PASSWORD_MAX_LENGTH = 1024


def _email(value: str) -> str:
    """Syntax only (deliverability is for the mail server to say); stored normalised, as
    every lookup compares that form."""
    email = normalise_email(value)
    try:
        validate_email(email, check_deliverability=False)
    except EmailNotValidError as error:
        raise ValueError(f"not a valid email address: {error}") from None
    return email


def clean_display_name(value: str) -> str:
    """A display name without surrounding blanks; blank is refused."""
    stripped = value.strip()
    if not stripped:
        raise ValueError("must not be blank")
    return stripped


class RegistrationCreate(PlainWriteSchema):
    email: Annotated[
        str, Field(min_length=3, max_length=EMAIL_MAX_LENGTH), AfterValidator(_email)
    ] = Field(description="Compared case-insensitively; stored in lower case.")
    password: Annotated[
        str, Field(min_length=PASSWORD_MIN_LENGTH, max_length=PASSWORD_MAX_LENGTH)
    ] = Field(description=f"At least {PASSWORD_MIN_LENGTH} characters.")
    display_name: Annotated[str, Field(max_length=200), AfterValidator(clean_display_name)]
    # strict body, but a UUID travels in JSON as a string
    organisation: Annotated[uuid.UUID, Field(strict=False)] | None = Field(
        None,
        description="A partner registration: the portal organisation to join (its id). The "
        "new account then also waits in the organisation's approvals, and approving it there "
        "activates both.",
    )


class RegistrationAccepted(PlainReadSchema):
    status: Literal["pending"] = Field(
        "pending",
        description="The same answer whether or not the address already had an account, "
        "so that the form does not tell who is registered; an administrator reviews new "
        "registrations and the applicant is emailed on approval.",
    )
