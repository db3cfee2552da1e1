from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from email_validator import EmailNotValidError, validate_email
from pydantic import AfterValidator, Field

from portico.core.account import EMAIL_MAX_LENGTH, AccountStatus, normalise_email
from portico.core.schema import ReadSchema, WriteSchema

MAX_ASSIGNMENTS = 100


def _email(value: str) -> str:
    """Syntax only: nothing is sent yet (the inviter passes the link on), so deliverability
    is not checked. The stored form is :func:`normalise_email`'s, as every lookup uses it."""
    email = normalise_email(value)
    try:
        validate_email(email, check_deliverability=False)
    except EmailNotValidError as error:
        raise ValueError(f"not a valid email address: {error}") from None
    return email


def _unique(ids: list[uuid.UUID]) -> list[uuid.UUID]:
    if len(set(ids)) != len(ids):
        raise ValueError("ids must be unique")
    return ids


Email = Annotated[str, Field(min_length=3, max_length=EMAIL_MAX_LENGTH), AfterValidator(_email)]
# JSON has no UUID type: a UUID string is the strict form of an id.
Id = Annotated[uuid.UUID, Field(strict=False)]
Ids = Annotated[list[Id], Field(max_length=MAX_ASSIGNMENTS), AfterValidator(_unique)]
DisplayName = Annotated[str, Field(max_length=200)]


class UserInvite(WriteSchema):
    email: Email = Field(description="Who to invite; an existing account is added as it is.")
    role_ids: Ids = Field(default_factory=list, description="Roles of this organisation.")
    group_ids: Ids = Field(default_factory=list, description="Groups of this organisation.")
    display_name: DisplayName | None = Field(
        None, description="For a new account only; an existing account keeps its name."
    )


class UserUpdate(WriteSchema):
    """Lists replace the current ones; an absent field is left as it is."""

    role_ids: Ids | None = None
    group_ids: Ids | None = None
    display_name: DisplayName | None = None


class RoleRef(ReadSchema):
    id: uuid.UUID
    name: str


class UserRead(ReadSchema):
    id: uuid.UUID = Field(description="The account's id (the same in every organisation).")
    email: str
    display_name: str
    status: AccountStatus
    role_ids: list[uuid.UUID]
    roles: list[RoleRef]
    group_ids: list[uuid.UUID]
    invited_at: datetime | None = Field(
        None, description="When the latest invitation to this organisation was issued."
    )
    created_at: datetime = Field(description="When the user joined this organisation.")


class InvitationRead(ReadSchema):
    token: str = Field(description="Shown only once; the invitee sets a password with it.")
    accept_url: str
    expires_at: datetime


class UserInvited(UserRead):
    invitation: InvitationRead
