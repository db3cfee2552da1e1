"""HTTP shapes of the developer's own account (snake_case)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from portico.core.account import AccountStatus
from portico.core.schema import PlainReadSchema
from portico.marketplace.organisation.models import MembershipStatus
from portico.marketplace.organisation.schemas import RoleRef, TeamRef


class MyOrganisation(PlainReadSchema):
    id: uuid.UUID
    name: str
    relationship: uuid.UUID = Field(description="The membership's id.")
    status: MembershipStatus = Field(
        description="active; invited (an invitation to accept) or pending (a registration "
        "awaiting the organisation's approval) grant nothing yet."
    )
    roles: list[RoleRef] = Field(
        description="The organisation roles held, directly or through a team (active only)."
    )
    permissions: list[str] = Field(description="What those roles grant in the organisation.")
    teams: list[TeamRef]


class Me(PlainReadSchema):
    id: uuid.UUID
    email: str
    display_name: str
    status: AccountStatus
    organisations: list[MyOrganisation] = Field(
        description="Its relationships with portal organisations (rejected ones left out), "
        "by organisation name."
    )


class MyNotification(PlainReadSchema):
    id: uuid.UUID
    type: str = Field(description="What happened: partner_approved, subscription_rejected, ...")
    subject: str
    body: str
    entity_type: str | None = Field(description="What it is about (subscription, ...).")
    entity_id: str | None
    data: dict[str, Any] = Field(description="Details, such as a rejection's reason.")
    created_at: datetime


class InvitationAccepted(PlainReadSchema):
    organisation: uuid.UUID = Field(description="The organisation joined.")
    organisation_name: str
    relationship: uuid.UUID = Field(description="The membership, now active.")
    account_status: AccountStatus = Field(description="active: the account can sign in.")
