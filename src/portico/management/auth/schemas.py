from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import Field

from portico.core.schema import ReadSchema, WriteSchema


class LoginRequest(WriteSchema):
    email: str = Field(min_length=3, max_length=254, description="The account's email.")
    password: str = Field(min_length=1, max_length=1024, description="The account's password.")


class RefreshRequest(WriteSchema):
    refresh_token: str = Field(min_length=1, max_length=512, description="From login/refresh.")


class AcceptInvitationRequest(WriteSchema):
    token: str = Field(min_length=1, max_length=512, description="The invitation token.")
    password: str = Field(
        min_length=1,
        max_length=1024,
        description="A new account: the password to set (at least 12 characters). "
        "An existing account: its current password.",
    )
    display_name: str | None = Field(None, max_length=200)


class TokenResponse(ReadSchema):
    token: str = Field(description="Bearer access token (JWT), valid for one hour.")
    refresh_token: str = Field(description="Opaque; exchange at /api/auth/refresh. Single use.")
    expires_at: datetime = Field(description="When the access token expires.")
    token_type: str = "Bearer"  # noqa: S105 - the scheme name, not a secret


class MeOrg(ReadSchema):
    id: uuid.UUID
    name: str
    roles: list[str]
    permissions: list[str]


class MeRead(ReadSchema):
    id: uuid.UUID
    email: str
    display_name: str
    is_platform_admin: bool
    orgs: list[MeOrg]
