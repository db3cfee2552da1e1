"""jwt-auth: the consumer is the one whose ``key`` a signed JWT names.

The consumer's ``algorithm`` is enforced, never the token header's (no algorithm confusion);
``exp`` and ``nbf`` are checked (the cryptography is in ``verify``).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import logging
from collections.abc import Mapping
from typing import Any, Literal, Self

from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from pydantic import Field, model_validator

from portico.core.validation import invalid
from portico.gateway.context import BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import (
    HEADER_NAME,
    Category,
    ConsumerCredential,
    PluginConfig,
    PluginSpec,
)
from portico.gateway.plugins.jwt_auth.verify import (
    ConsumerKey,
    KeyUnavailable,
    TokenRejected,
    prepare_key,
    unverified_claims,
    verify,
)
from portico.gateway.snapshot import SnapshotConsumer

logger = logging.getLogger("portico.gateway.plugins.jwt_auth")

Algorithm = Literal["HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "ES384", "EdDSA"]

#: RFC 7518 §3.2: an HMAC key of at least the hash's size MUST be used
_HMAC_BYTES = {"HS256": 32, "HS384": 48, "HS512": 64}
_CURVES = {"ES256": ec.SECP256R1, "ES384": ec.SECP384R1}


def public_key_error(pem: str, algorithm: str) -> str | None:
    """Why ``pem`` cannot verify ``algorithm`` signatures, or None."""
    try:
        key = load_pem_public_key(pem.encode())
    except (ValueError, TypeError):
        return "public_key is not a PEM public key"
    if algorithm.startswith("RS"):
        if not isinstance(key, rsa.RSAPublicKey) or key.key_size < 2048:
            return f"public_key must be an RSA key of at least 2048 bits for {algorithm}"
    elif algorithm in _CURVES:
        curve = _CURVES[algorithm]
        if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, curve):
            return f"public_key must be an EC key on curve {curve.name} for {algorithm}"
    elif not isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
        return "public_key must be an Ed25519 or Ed448 key for EdDSA"
    return None


class JwtAuthConfig(PluginConfig):
    header: str = Field(
        "authorization", pattern=HEADER_NAME, description="Request header carrying the token."
    )
    query: str = Field(
        "jwt", pattern=HEADER_NAME, description="Query argument tried when the header is absent."
    )
    cookie: str = Field(
        "jwt", pattern=HEADER_NAME, description="Cookie tried when header and query are absent."
    )
    hide_credentials: bool = Field(
        False, description="Remove the token from the request before it is proxied upstream."
    )


class JwtAuthCredential(ConsumerCredential):
    key: str = Field(
        min_length=1,
        max_length=256,
        description="Value of the token's `key` claim that identifies this consumer.",
    )
    secret: str | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="HMAC secret (HS256/HS384/HS512): at least as many bytes as the hash.",
    )
    public_key: str | None = Field(
        None,
        min_length=1,
        max_length=16_384,
        description="PEM public key verifying RS*, ES* and EdDSA signatures.",
    )
    algorithm: Algorithm = Field("HS256", description="The only algorithm accepted.")
    exp: int = Field(
        86_400, ge=1, le=31_536_000, description="Lifetime in seconds of tokens issued for it."
    )
    base64_secret: bool = Field(False, description="`secret` is base64-encoded bytes.")

    secret_fields = frozenset({"secret"})

    @model_validator(mode="after")
    def _key_material(self) -> Self:
        if self.algorithm in _HMAC_BYTES:
            if self.secret is None:
                invalid(("secret",), f'property "secret" is required for {self.algorithm}')
            secret = self.secret.encode()
            if self.base64_secret:
                try:
                    secret = base64.b64decode(secret, validate=True)
                except (binascii.Error, ValueError):
                    invalid(("secret",), "secret is not valid base64 (base64_secret is true)")
            if len(secret) < _HMAC_BYTES[self.algorithm]:
                invalid(
                    ("secret",),
                    f"secret must be at least {_HMAC_BYTES[self.algorithm]} bytes "
                    f"for {self.algorithm} (RFC 7518 §3.2)",
                )
        else:
            if self.public_key is None:
                invalid(("public_key",), f'property "public_key" is required for {self.algorithm}')
            reason = public_key_error(self.public_key, self.algorithm)
            if reason is not None:
                invalid(("public_key",), reason)
        return self


PLUGIN = PluginSpec(
    name="jwt-auth",
    category=Category.AUTHENTICATION,
    order=102,
    reorderable=True,
    config=JwtAuthConfig,
    consumer=JwtAuthCredential,
    description="Authenticates consumers by a signed JWT whose `key` claim names them; the "
    "consumer's algorithm is enforced and exp/nbf checked; otherwise → 401.",
)


class JwtAuthRuntime(BasePluginRuntime):
    """APISIX's flow: the token from the header, else the query argument, else the cookie;
    the consumer named by its ``key`` claim; the signature checked with that consumer's key
    and algorithm only; ``exp``/``nbf`` against the gateway clock.

    Consumers' keys are prepared on first use and kept for this runtime's life (one
    snapshot): a Fernet decryption or a PEM parse per consumer, never per request, and none
    at all for consumers that never call. A consumer whose key cannot be prepared (no server
    secret on this node, a secret sealed under another one) is refused, and logged once."""

    def __init__(self, config: JwtAuthConfig, services: RuntimeServices) -> None:
        self.config = config
        self.header = config.header.lower()
        self.cookie_var = "cookie_" + config.cookie
        self.consumers = services.consumers
        self.secrets = services.secrets
        self.now = services.now
        self._keys: dict[str, ConsumerKey | None] = {}

    def _token(self, ctx: RequestContext) -> tuple[str, str] | None:
        """``(token, where it was found)``; an empty value counts as absent."""
        value = ctx.header(self.header)
        if value:
            scheme, _, rest = value.partition(" ")
            if scheme.lower() == "bearer":  # "Bearer" alone: a scheme without a token
                value = rest
            return value.strip(), "header"
        value = ctx.arg(self.config.query)
        if value:
            return value.strip(), "query"
        value = ctx.var(self.cookie_var)
        if value:
            return value.strip(), "cookie"
        return None

    def _key(
        self, consumer: SnapshotConsumer, credential: Mapping[str, Any], cached_as: str
    ) -> ConsumerKey | None:
        try:
            return self._keys[cached_as]
        except KeyError:
            pass
        try:
            key: ConsumerKey | None = prepare_key(credential, self.secrets)
        except KeyUnavailable as error:
            logger.warning(
                "jwt-auth: tokens of consumer %s cannot be verified: %s; they are refused",
                consumer.username,
                error,
            )
            key = None
        self._keys[cached_as] = key
        return key

    def access(self, ctx: RequestContext) -> Reply | None:
        found = self._token(ctx)
        if found is None or not found[0]:
            return Reply.error(401, "Missing JWT token in request")
        token, source = found
        try:
            user_key = unverified_claims(token).get("key")
            if user_key is None or user_key == "":
                return Reply.error(401, "missing user key in JWT token")
            if not isinstance(user_key, str):
                return Reply.error(401, "Invalid user key in JWT token")
            consumer = self.consumers.find("jwt-auth", user_key)
            if consumer is not None:
                key = self._key(consumer, consumer.credentials["jwt-auth"], consumer.id)
            else:  # a key id replaced by a rotation: its tokens work until the grace ends
                retired = self.consumers.find_retiring("jwt-auth", user_key, self.now())
                if retired is None:
                    return Reply.error(401, "Invalid user key in JWT token")
                consumer = retired.consumer
                key = self._key(consumer, retired.credential, "retired:" + user_key)
            if key is None:
                return Reply.error(401, "failed to verify jwt")
            verify(token, key, self.now())
        except TokenRejected as rejected:
            return Reply.error(401, str(rejected))
        ctx.consumer = consumer
        if self.config.hide_credentials:
            self._hide(ctx, source)
        return None

    def _hide(self, ctx: RequestContext, source: str) -> None:
        """Take the token out of what the upstream receives, wherever it came from."""
        if source == "header":
            ctx.remove_upstream_headers.add(self.header)
        elif source == "query":
            ctx.drop_argument(self.config.query)
        else:
            cookies = [v for k, v in ctx.request.headers if k == "cookie"]
            kept = without_cookie("; ".join(cookies), self.config.cookie)
            if kept:
                ctx.upstream_headers["cookie"] = kept
            else:
                ctx.remove_upstream_headers.add("cookie")


def without_cookie(header: str, name: str) -> str:
    """A Cookie header value without the cookies called ``name``."""
    pairs = (pair.strip() for pair in header.split(";"))
    return "; ".join(p for p in pairs if p and p.partition("=")[0].strip() != name)


PLUGIN = dataclasses.replace(PLUGIN, runtime=JwtAuthRuntime)
