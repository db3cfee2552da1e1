"""Verifying a jwt-auth consumer's tokens: its key material prepared once, its algorithm the
only one accepted (never the token header's choice), ``exp``/``nbf`` read against the
gateway's clock.

Kept apart from the plugin (the package's ``__init__``) so that the plugin reads as APISIX's
flow (find the token, find the consumer by its ``key`` claim, verify) while the cryptography
stays here.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jwt
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from portico.gateway.sealing import SecretBox

if TYPE_CHECKING:
    from jwt.types import Options

_HMAC = frozenset({"HS256", "HS384", "HS512"})

#: signature and header checks only: the claims are checked below with the gateway's clock
#: (injectable, unlike PyJWT's), and only exp/nbf, as APISIX does (aud, iat, sub... are the
#: upstream's business). Keys shorter than RFC 7518 asks are refused, not warned about.
_VERIFY: Options = {
    "verify_signature": True,
    "verify_exp": False,
    "verify_nbf": False,
    "verify_iat": False,
    "verify_aud": False,
    "verify_iss": False,
    "verify_sub": False,
    "verify_jti": False,
    "require": [],
    "enforce_minimum_key_length": True,
}
_UNVERIFIED: Options = {"verify_signature": False}
_JWT = jwt.PyJWT()


class TokenRejected(Exception):
    """The token cannot authenticate anyone; ``str(error)`` is the client's message."""


class KeyUnavailable(Exception):
    """The consumer's key material cannot be used here (the reason is for the log)."""


@dataclass(frozen=True, slots=True)
class ConsumerKey:
    algorithm: str
    #: HMAC secret bytes, or a loaded public key object (parsed once, not per request)
    key: Any


def prepare_key(credential: Mapping[str, Any], secrets: SecretBox | None) -> ConsumerKey:
    """The verification key of a stored jwt-auth credential (see
    ``management.consumer.credentials``: the HMAC secret travels Fernet-encrypted as
    ``secret_encrypted``, public keys in clear); :class:`KeyUnavailable` when it cannot be
    used."""
    algorithm = str(credential.get("algorithm") or "HS256")
    if algorithm not in _HMAC:
        pem = credential.get("public_key")
        if not isinstance(pem, str):
            raise KeyUnavailable(f"no public_key for {algorithm}")
        try:
            return ConsumerKey(algorithm, load_pem_public_key(pem.encode()))
        except (ValueError, TypeError):
            raise KeyUnavailable("public_key is not a PEM public key") from None
    sealed = credential.get("secret_encrypted")
    if not isinstance(sealed, str):
        raise KeyUnavailable(f"no secret for {algorithm}")
    if secrets is None:
        raise KeyUnavailable("the secret is encrypted and this node was given no server secret")
    try:
        secret = secrets.decrypt(sealed).encode()
    except ValueError:
        raise KeyUnavailable("the secret cannot be decrypted with this node's keys") from None
    if credential.get("base64_secret"):
        try:
            secret = base64.b64decode(secret, validate=True)
        except (binascii.Error, ValueError):
            raise KeyUnavailable("the secret is not valid base64 (base64_secret)") from None
    return ConsumerKey(algorithm, secret)


def unverified_claims(token: str) -> dict[str, Any]:
    """The token's claims before any check, to learn whose key verifies it."""
    try:
        payload = _JWT.decode_complete(token, options=_UNVERIFIED)["payload"]
    except jwt.PyJWTError:
        raise TokenRejected("JWT token invalid") from None
    return dict(payload)


def verify(token: str, key: ConsumerKey, now: float) -> dict[str, Any]:
    """The claims of ``token`` once its signature (by ``key``'s algorithm only) and its
    ``exp``/``nbf`` (at ``now``, seconds since the epoch) hold; :class:`TokenRejected`
    otherwise."""
    try:
        claims = dict(_JWT.decode(token, key.key, algorithms=[key.algorithm], options=_VERIFY))
    except (jwt.PyJWTError, ValueError, TypeError):
        # a bad signature, another algorithm, an unusable key: the token proves nothing
        raise TokenRejected("failed to verify jwt") from None
    exp, nbf = claims.get("exp"), claims.get("nbf")
    if exp is not None and (not _numeric(exp) or now >= exp):  # RFC 7519 §4.1.4
        raise TokenRejected("failed to verify jwt")
    if nbf is not None and (not _numeric(nbf) or now < nbf):  # RFC 7519 §4.1.5
        raise TokenRejected("failed to verify jwt")
    return claims


def _numeric(value: Any) -> bool:
    # JSON allows NaN and Infinity through Python's parser: neither is a NumericDate
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
