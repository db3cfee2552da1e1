"""HTTP shapes of organisations, their members (relationships), teams and partner approvals
(snake_case)."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Annotated, Literal, TypeVar

from pydantic import AfterValidator, Field

from portico.core.account import EMAIL_MAX_LENGTH, AccountStatus, normalise_email
from portico.core.schema import PlainReadSchema, PlainWriteSchema
from portico.marketplace.organisation.models import MembershipStatus
from portico.marketplace.organisation.permissions import PERMISSION_KEYS
from portico.marketplace.user.schemas import NOT_BLANK, REASON_MAX_LENGTH

#: at most this many addresses per invitation request (each one is an email sent)
MAX_INVITATIONS = 100

T = TypeVar("T")


#: the syntax an invited address must have, stated in the OpenAPI document and checked
#: with the same expression (a dot-atom local part; a host name with a top-level domain of
#: letters), so that what the document calls valid is accepted
EMAIL_PATTERN = (
    r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$"
)
_EMAIL = re.compile(EMAIL_PATTERN)


def _email(value: str) -> str:
    """Syntax only (whether it is delivered is the mail server's to say); normalised, as
    accounts are looked up by that form."""
    if not _EMAIL.fullmatch(value):
        raise ValueError("not a valid email address")
    return normalise_email(value)


def _not_blank(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ValueError("must not be blank")
    return stripped


def _distinct(values: list[T]) -> list[T]:
    """The same address (or team) twice is one (after normalisation: Ada@ and ada@ are one
    account)."""
    return list(dict.fromkeys(values))


def _distinct_or_none(values: list[T] | None) -> list[T] | None:
    return None if values is None else _distinct(values)


# strict bodies, but a UUID travels in JSON as a string
Id = Annotated[uuid.UUID, Field(strict=False)]
Email = Annotated[
    str,
    # the pattern is for the document: _email checks it with its own, clearer, message
    Field(min_length=6, max_length=EMAIL_MAX_LENGTH, json_schema_extra={"pattern": EMAIL_PATTERN}),
    AfterValidator(_email),
]


class OrganisationRead(PlainReadSchema):
    id: uuid.UUID
    name: str
    domains: list[str] = Field(description="The host names its portal answers on.")
    members: int = Field(description="Active members.")
    pending_approvals: int = Field(description="Partner registrations awaiting approval.")
    teams: int = Field(description="Teams of the organisation.")
    created_at: datetime
    updated_at: datetime


class TeamRead(PlainReadSchema):
    id: uuid.UUID
    organisation_id: uuid.UUID
    name: str
    members: int = Field(description="Memberships in the team, whatever their status.")
    created_at: datetime
    updated_at: datetime


class TeamRef(PlainReadSchema):
    id: uuid.UUID
    name: str


class MemberAccount(PlainReadSchema):
    """The account a relationship is for (it stays when the relationship is removed)."""

    id: uuid.UUID
    email: str
    display_name: str
    status: AccountStatus = Field(description="The account's own status on the portal.")


class MemberRead(PlainReadSchema):
    id: uuid.UUID = Field(description="The relationship's id (`{relationship}` in paths).")
    organisation_id: uuid.UUID
    user: MemberAccount
    status: MembershipStatus = Field(
        description="invited (not accepted yet), pending (a partner registration awaiting "
        "approval), active (a member), rejected (with status_reason)."
    )
    status_reason: str | None = Field(
        description="Why the registration was rejected, as the manager wrote it."
    )
    status_changed_at: datetime
    teams: list[TeamRef] = Field(description="The organisation's teams the person is in.")
    invited_by: uuid.UUID | None = Field(description="Who sent the latest invitation.")
    created_at: datetime


class RejectedMember(MemberRead):
    account_deleted: bool = Field(
        description="Whether the account was deleted with the rejection (opt-in)."
    )


class MemberInvite(PlainWriteSchema):
    emails: Annotated[
        list[Email], Field(min_length=1, max_length=MAX_INVITATIONS), AfterValidator(_distinct)
    ] = Field(
        description="Who to invite: an account is created (invited, without a password) "
        "for an address that has none. Repeated addresses are invited once."
    )
    teams: Annotated[list[Id], AfterValidator(_distinct)] = Field(
        default_factory=list,
        max_length=MAX_INVITATIONS,
        description="Teams of this organisation to put the invited people in.",
    )


class ApprovalReject(PlainWriteSchema):
    reason: Annotated[
        str,
        Field(max_length=REASON_MAX_LENGTH, json_schema_extra={"pattern": NOT_BLANK}),
        AfterValidator(_not_blank),
    ] = Field(description="Required; kept as status_reason and sent in the rejection email.")
    delete_account: bool = Field(
        False,
        description="Also delete the applicant's account. Only an account that was never "
        "let in (pending, invited or rejected on the portal) and belongs to no other "
        "organisation can be deleted; otherwise 409 and nothing changes.",
    )


# -- organisation roles -----------------------------------------------------------------------

RoleLabel = Annotated[
    str,
    Field(min_length=1, max_length=100, json_schema_extra={"pattern": NOT_BLANK}),
    AfterValidator(_not_blank),
]
PermissionKey = Literal[PERMISSION_KEYS]  # type: ignore[valid-type]
PERMISSIONS_DESCRIPTION = "Organisation permission keys (GET /organisations/permissions)."


class OrganisationPermissionRead(PlainReadSchema):
    key: str = Field(description="What a role grants, exactly as roles list it.")
    title: str


class PermissionCategory(PlainReadSchema):
    category: str
    permissions: list[OrganisationPermissionRead]


class RoleRead(PlainReadSchema):
    id: str = Field(
        description="org-admin or org-member for the predefined roles, a UUID for a custom "
        "role (`{role}` in paths)."
    )
    label: str
    predefined: bool = Field(description="Predefined roles cannot be edited or deleted.")
    permissions: list[str] = Field(description="Granted permissions, in catalogue order.")
    organisation_id: uuid.UUID | None = Field(description="Null for a predefined role.")
    created_at: datetime | None
    updated_at: datetime | None


class RoleCatalogue(PlainReadSchema):
    roles: list[RoleRead] = Field(description="The predefined roles, then custom ones by label.")
    available_permissions: list[str] = Field(
        description="What a custom role may grant (GET /organisations/permissions)."
    )


class RoleRef(PlainReadSchema):
    id: str
    label: str
    predefined: bool


class InheritedRoles(PlainReadSchema):
    team: TeamRef
    roles: list[RoleRef]


class MemberRoles(PlainReadSchema):
    relationship: uuid.UUID
    direct: list[RoleRef] = Field(description="Roles given to the member.")
    inherited: list[InheritedRoles] = Field(
        description="Roles held through each of the member's teams."
    )
    permissions: list[str] = Field(
        description="The union of the permissions of all those roles, in catalogue order."
    )


class RoleCreate(PlainWriteSchema):
    label: RoleLabel = Field(description="Unique within the organisation.")
    permissions: Annotated[list[PermissionKey], AfterValidator(_distinct)] = Field(
        default_factory=list, description=PERMISSIONS_DESCRIPTION
    )


class RoleUpdate(PlainWriteSchema):
    label: RoleLabel | None = Field(None, description="Unique within the organisation.")
    permissions: Annotated[list[PermissionKey] | None, AfterValidator(_distinct_or_none)] = Field(
        None, description=f"{PERMISSIONS_DESCRIPTION} Replaces the role's list."
    )


class MemberRolesReplace(PlainWriteSchema):
    roles: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=64)]], AfterValidator(_distinct)
    ] = Field(
        max_length=100,
        description="The member's direct roles from now on: predefined role ids and custom "
        "roles' ids (GET /organisations/{group}/roles). Empty removes them all.",
    )
