"""edge-auth's configuration and consumer credential (pydantic models, kept apart from the
runtime as the hot plugins' are: see CONVENTIONS.md "Compiled modules")."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from portico.core.validation import invalid
from portico.gateway.plugins.base import (
    HEADER_NAME,
    SEALED_PREFIX,
    ConsumerCredential,
    PluginConfig,
    secret_reference,
)

#: RFC 7518 §3.2: an HMAC key of at least the hash's size; a shorter one is guessable
MIN_SECRET_BYTES = {"HS256": 32, "HS384": 48, "HS512": 64}
#: a client id is a URL-safe token without ':' (HTTP Basic ends the user-id at the colon)
CLIENT_ID = r"^[A-Za-z0-9._~-]{8,128}$"
MAX_TOKEN_TTL = 86_400


def short_secret(length: int, algorithm: str) -> str:
    """The refusal of a signing secret of ``length`` bytes for ``algorithm``."""
    need = MIN_SECRET_BYTES[algorithm]
    return (
        f"signing_secret must be at least {need} bytes for {algorithm} once resolved (it is "
        f"{length}): a shorter HMAC key is a guessable key"
    )


class ApiKeyLocation(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    source: Literal["header", "query"] = Field(
        "header", description="Where the key is read: a request header or a query argument."
    )
    key: str = Field(
        "apikey", pattern=HEADER_NAME, description="The header's or query argument's name."
    )


class EdgeAuthConfig(PluginConfig):
    mode: Literal["generate", "validate"] = Field(
        description="generate: the route is an OAuth 2.0 client-credentials token endpoint "
        "(RFC 6749 §4.4) issuing JWTs; validate: requests must carry such a token (or the "
        "app's client id as an API key)."
    )
    validate_auth_type: Literal["jwt-auth", "key-auth"] = Field(
        "jwt-auth",
        description="validate mode: jwt-auth requires Authorization: Bearer <JWT> signed with "
        "signing_secret; key-auth requires the app's client id as an API key (see apikey).",
    )
    signing_secret: str | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="The HMAC key tokens are signed and checked with: the secret itself, or "
        "$env://NAME (the control plane's environment) or $secret://NAME (a secret of the "
        "organisation's store), resolved at deploy. At least 32 bytes (HS256) once resolved. "
        "Required by generate and by validate with jwt-auth.",
    )
    algorithm: Literal["HS256", "HS384", "HS512"] = Field(
        "HS256", description="The JWT signature algorithm: the only one accepted."
    )
    token_ttl: int = Field(
        3600, ge=1, le=MAX_TOKEN_TTL, description="generate: seconds a token is valid for."
    )
    apikey: ApiKeyLocation = Field(
        default_factory=ApiKeyLocation,
        description="validate with key-auth: where the API key (the app's client id) is.",
    )
    hide_credentials: bool = Field(
        False, description="validate: remove the token or key before the request is proxied."
    )

    secret_fields = frozenset({"signing_secret"})
    secret_references = frozenset({"signing_secret"})

    @model_validator(mode="after")
    def _signing_secret(self) -> Self:
        needed = self.mode == "generate" or self.validate_auth_type == "jwt-auth"
        secret = self.signing_secret
        if secret is None:
            if needed:
                invalid(
                    ("signing_secret",),
                    f'property "signing_secret" is required for mode {self.mode}'
                    + (" with jwt-auth" if self.mode == "validate" else ""),
                )
            return self
        if secret.startswith(SEALED_PREFIX):
            return self  # what deploy wrote into the snapshot; opened by the gateway
        try:
            reference = secret_reference(secret)
        except ValueError as error:
            invalid(("signing_secret",), str(error))
        if reference is None and len(secret.encode()) < MIN_SECRET_BYTES[self.algorithm]:
            invalid(("signing_secret",), short_secret(len(secret.encode()), self.algorithm))
        return self


class EdgeAuthCredential(ConsumerCredential):
    client_id: str = Field(
        pattern=CLIENT_ID,
        description="The app's OAuth 2.0 client id (8 to 128 URL-safe characters, no ':'; "
        "generated when omitted); also its API key for validate with key-auth.",
    )
    client_secret: str = Field(
        min_length=32,
        max_length=512,
        description="The client secret (stored hashed; generated when omitted: shown once).",
    )

    secret_fields = frozenset({"client_secret"})
