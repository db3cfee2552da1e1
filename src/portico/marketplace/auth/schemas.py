"""HTTP shapes of the admin API's token exchange (snake_case)."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from portico.core.schema import PlainReadSchema, PlainWriteSchema
from portico.core.validation import invalid


class TokenRequest(PlainWriteSchema):
    # No email syntax check: a malformed address is just an unknown account (the uniform 401).
    email: str = Field(min_length=1, max_length=254, description="The account's email.")
    password: str = Field(min_length=1, max_length=1024, description="The account's password.")


class AdminTokenRequest(PlainWriteSchema):
    """The admin API's sign-in: either an account's ``email`` and ``password``, or the
    ``saml_code`` a SAML sign-in ended with (``…/identity-providers/{id}/saml/login
    ?client=admin-api`` on the management API)."""

    # No email syntax check: a malformed address is just an unknown account (the uniform 401).
    email: str | None = Field(
        None, min_length=1, max_length=254, description="The account's email."
    )
    password: str | None = Field(
        None, min_length=1, max_length=1024, description="The account's password."
    )
    saml_code: str | None = Field(
        None,
        min_length=1,
        max_length=512,
        description="The one-time code of a SAML sign-in for the admin API (a minute to live).",
    )
    code_verifier: str | None = Field(
        None,
        min_length=43,
        max_length=128,
        description="The secret whose SHA-256 was that sign-in's `challenge`, if it had one.",
    )

    @model_validator(mode="after")
    def _one_way(self) -> Self:
        if self.saml_code is not None:
            extra = [n for n in ("email", "password") if getattr(self, n) is not None]
            if extra:
                invalid((extra[0],), "must not be given with saml_code")
            return self
        if self.code_verifier is not None:
            invalid(("code_verifier",), "only with saml_code")
        for name in ("email", "password"):
            if getattr(self, name) is None:
                invalid((name,), "Field required")
        return self


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
