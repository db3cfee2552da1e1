from __future__ import annotations

import uuid
from typing import Literal

from pydantic import Field

from portico.core.schema import ReadSchema, WriteSchema

Client = Literal["console", "admin-api"]


class SignInOption(ReadSchema):
    """One active identity-provider configuration, as the sign-in page offers it."""

    id: uuid.UUID
    org_id: uuid.UUID
    org_name: str
    name: str = Field(description="Shown as 'Sign in with <name>'.")
    login_url: str = Field(description="Where the browser goes to start the sign-in.")


class SignInOptions(ReadSchema):
    items: list[SignInOption]


class SamlCodeExchange(WriteSchema):
    code: str = Field(
        min_length=1, max_length=512, description="The one-time code the sign-in ended with."
    )
    code_verifier: str | None = Field(
        None,
        min_length=43,
        max_length=128,
        description="The secret whose SHA-256 (base64url) was the `challenge` given to "
        "…/saml/login; required when one was.",
    )
