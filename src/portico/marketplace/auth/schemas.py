"""HTTP shapes of the admin API's token exchange (snake_case)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from portico.core.schema import PlainReadSchema, PlainWriteSchema


class TokenRequest(PlainWriteSchema):
    # No email syntax check: a malformed address is just an unknown account (the uniform 401).
    email: str = Field(min_length=1, max_length=254, description="The account's email.")
    password: str = Field(min_length=1, max_length=1024, description="The account's password.")


class RefreshRequest(PlainWriteSchema):
    refresh_token: str = Field(
        min_length=1, max_length=512, description="From /auth/token or a previous refresh."
    )


class TokenRead(PlainReadSchema):
    id_token: str = Field(
        description="Signed JWT (ES256, `kid` in the header; public keys at "
        "/api/portal/v1/.well-known/jwks.json). Send as `Authorization: Bearer <id_token>`."
    )
    refresh_token: str = Field(
        description="Opaque and single-use: each refresh returns its successor; presenting "
        "a used one revokes every token descended from the same sign-in."
    )
    token_type: Literal["Bearer"] = "Bearer"  # noqa: S105 - the scheme, not a secret
    expires_in: int = Field(description="Seconds until the ID token expires.")
