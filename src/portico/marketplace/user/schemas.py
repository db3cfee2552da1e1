"""HTTP shapes of the marketplace's view of accounts (snake_case)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, Field

from portico.core.account import AccountStatus
from portico.core.schema import PlainReadSchema, PlainWriteSchema
from portico.marketplace.role.schemas import RoleRef

REASON_MAX_LENGTH = 1000
#: what _not_blank enforces, for the OpenAPI document (it keeps its clearer message): some
#: character that str.strip() keeps, spelled out because \s differs between Python and the
#: ECMA-262 regexes of JSON Schema (\x1c-\x1f, \x85, \ufeff)
NOT_BLANK = r"[^\x09-\x0d\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def _not_blank(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ValueError("must not be blank")
    return stripped


def _blank_is_none(value: str | None) -> str | None:
    """An optional reason left empty in a form is no reason, not an error."""
    return (value.strip() or None) if value is not None else None


class IdentityRead(PlainReadSchema):
    provider: str = Field(description="The external identity provider, e.g. firebase.")
    subject: str = Field(description="The account's id at that provider.")
    linked_at: datetime


class UserRead(PlainReadSchema):
    id: uuid.UUID
    email: str
    display_name: str
    status: AccountStatus
    status_reason: str | None = Field(
        description="Why the account was rejected or blocked, as the administrator wrote it."
    )
    roles: list[RoleRef] = Field(
        description="Effective site roles in weight order: 'authenticated' always, "
        "'administrator' for the bootstrap administrator, then the assigned ones."
    )
    identity: IdentityRead | None = Field(
        description="The account's link to an external identity provider, null when it has "
        "none (DELETE /users/{user}/firebase-identity severs it)."
    )
    created_at: datetime
    last_login_at: datetime | None
    status_changed_at: datetime | None


class UserReject(PlainWriteSchema):
    reason: Annotated[
        str,
        Field(max_length=REASON_MAX_LENGTH, json_schema_extra={"pattern": NOT_BLANK}),
        AfterValidator(_not_blank),
    ] = Field(description="Required; stored on the account as status_reason.")


class UserBlock(PlainWriteSchema):
    reason: Annotated[
        str | None, Field(max_length=REASON_MAX_LENGTH), AfterValidator(_blank_is_none)
    ] = Field(None, description="Optional; stored on the account as status_reason.")


class UserRoles(PlainReadSchema):
    roles: list[RoleRef] = Field(description="Effective site roles in weight order.")
    permissions: list[str] = Field(
        description="Union of the installed permissions the roles grant, in catalogue order."
    )
