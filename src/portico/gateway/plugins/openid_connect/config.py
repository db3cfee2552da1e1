"""openid-connect's configuration (the pydantic model the management service validates
deploys with and the runtime reads)."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, field_validator, model_validator

from portico.core.validation import invalid
from portico.gateway.plugins.base import HttpUrl, PluginConfig

#: asymmetric JWS algorithms (RFC 7518, RFC 8037): a provider's tokens are checked against its
#: JWKS; HMAC would make the client secret a verification key, and "none" is no signature
SIGNING_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)

Text = Annotated[str, Field(min_length=1, max_length=1024)]


class OpenidConnectConfig(PluginConfig):
    client_id: str = Field(
        min_length=1, max_length=256, description="Client id registered with the provider."
    )
    client_secret: str | None = Field(
        None,
        min_length=1,
        max_length=1024,
        description="Client secret; required unless bearer_only is true.",
    )
    discovery: HttpUrl = Field(
        description="URL of the provider's discovery document "
        "(.../.well-known/openid-configuration)."
    )
    bearer_only: bool = Field(
        False, description="Only validate bearer tokens; never redirect to the provider."
    )
    scope: str = Field(
        "openid",
        min_length=1,
        max_length=1024,
        description='Space-separated scopes requested; must include "openid".',
    )
    realm: str = Field(
        "apisix",
        min_length=1,
        max_length=256,
        pattern=r'^[^"\\\x00-\x1f\x7f]+$',
        description="Realm named in the WWW-Authenticate header of 401 answers.",
    )
    audience: Text | None = Field(
        None, description="Expected `aud` of tokens (the client_id when unset)."
    )
    token_signing_alg_values_expected: list[str] = Field(
        default_factory=lambda: ["RS256", "ES256"],
        min_length=1,
        max_length=len(SIGNING_ALGORITHMS),
        description='Token signature algorithms accepted; "none" is refused.',
    )
    redirect_uri: HttpUrl | None = Field(
        None,
        description="Where the provider sends the browser back (the request URI + "
        "/.apisix/redirect when unset).",
    )
    logout_path: str = Field(
        "/logout",
        min_length=1,
        max_length=1024,
        pattern=r"^/[^\s?#]*$",
        description="Path that ends the browser session.",
    )
    timeout: int = Field(3, ge=1, le=60, description="Seconds to wait for the provider.")
    ssl_verify: bool = Field(True, description="Verify the provider's TLS certificate.")
    set_access_token_header: bool = Field(
        True, description="Send the access token to the upstream as X-Access-Token."
    )
    set_userinfo_header: bool = Field(
        True,
        description="Send the verified claims (the ID token's in a browser session) to the "
        "upstream as X-Userinfo: base64 of their JSON.",
    )
    session_secret: str | None = Field(
        None,
        min_length=16,
        max_length=1024,
        description="Key of the encrypted session cookie (browser flow); derived from "
        "client_secret when unset.",
    )
    session_cookie_secure: bool = Field(
        True, description="Mark the session cookie Secure (sent over HTTPS only)."
    )

    secret_fields = frozenset({"client_secret", "session_secret"})

    @field_validator("scope")
    @classmethod
    def _openid_scope(cls, scope: str) -> str:
        if "openid" not in scope.split():
            raise ValueError('scope must include "openid"')
        return scope

    @field_validator("token_signing_alg_values_expected")
    @classmethod
    def _signed(cls, algorithms: list[str]) -> list[str]:
        for algorithm in algorithms:
            if algorithm.lower() == "none":
                raise ValueError(
                    'token_signing_alg_values_expected: "none" is refused (unsigned tokens)'
                )
            if algorithm not in SIGNING_ALGORITHMS:
                raise ValueError(
                    f'token_signing_alg_values_expected: unsupported algorithm "{algorithm}" '
                    f"(one of {', '.join(sorted(SIGNING_ALGORITHMS))})"
                )
        return algorithms

    @model_validator(mode="after")
    def _secret_for_code_flow(self) -> Self:
        if not self.bearer_only and self.client_secret is None:
            invalid(
                ("client_secret",),
                'property "client_secret" is required unless bearer_only is true',
            )
        return self
