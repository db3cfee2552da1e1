"""Verifying a provider's tokens (bearer access tokens, ID tokens) with PyJWT.

The algorithm must be one the route accepts (``token_signing_alg_values_expected``, which
never holds "none" nor HMAC) AND one the signing key's type allows (``provider.algorithms_of``):
the token header chooses among those, never beyond them, so a public key can never be used as
an HMAC secret (the HS/RS confusion) and an unsigned token never verifies. The claims are
checked here against the gateway's clock (injectable, unlike PyJWT's): ``iss`` equal to the
discovery document's issuer, ``aud`` naming the audience, ``exp`` (required) and ``nbf`` with
``LEEWAY`` seconds of clock skew.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jwt

from portico.gateway.plugins.openid_connect.provider import KeySet, SigningKey

if TYPE_CHECKING:
    from jwt.types import Options

#: seconds of clock skew tolerated between the provider and the gateway
LEEWAY = 30.0

_SIGNATURE_ONLY: Options = {
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
_JWT = jwt.PyJWT()


class TokenRejected(Exception):
    """The token proves nothing; ``str(error)`` is the ``error_description`` sent back."""


class UnknownKey(TokenRejected):
    """The token names a key the cached set lacks (maybe the provider rotated its keys)."""

    def __init__(self, kid: str | None) -> None:
        super().__init__("token signed with an unknown key")
        self.kid = kid


@dataclass(frozen=True, slots=True)
class Expectations:
    issuer: str
    audience: str
    algorithms: frozenset[str]


def header_of(token: str) -> dict[str, Any]:
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise TokenRejected("token is not a JWS") from None
    return header


def key_for(header: dict[str, Any], keys: KeySet, expect: Expectations) -> SigningKey:
    """The key that must have signed a token with this header; :class:`UnknownKey` when the
    set has none of that ``kid``."""
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in expect.algorithms:
        raise TokenRejected("token signature algorithm not accepted")
    kid = header.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise TokenRejected("token kid is not a string")
    key = keys.find(kid)
    if key is None:
        raise UnknownKey(kid)
    if alg not in key.algorithms:
        raise TokenRejected("token signature algorithm does not fit its key")
    return key


def verify(
    token: str, header: dict[str, Any], key: SigningKey, expect: Expectations, now: float
) -> dict[str, Any]:
    """The claims of ``token`` once its signature by ``key`` and its claims hold."""
    try:
        claims = _JWT.decode(token, key.key, algorithms=[header["alg"]], options=_SIGNATURE_ONLY)
    except (jwt.PyJWTError, ValueError, TypeError):
        raise TokenRejected("token signature invalid") from None
    check_claims(claims, expect, now)
    return dict(claims)


def check_claims(claims: dict[str, Any], expect: Expectations, now: float) -> None:
    if claims.get("iss") != expect.issuer:
        raise TokenRejected("token issuer mismatch")
    audience = claims.get("aud")
    if not (
        audience == expect.audience or (isinstance(audience, list) and expect.audience in audience)
    ):
        raise TokenRejected("token audience mismatch")
    exp: Any = claims.get("exp")
    if not _numeric(exp):
        raise TokenRejected("token has no valid exp")
    if now >= exp + LEEWAY:
        raise TokenRejected("token expired")
    nbf: Any = claims.get("nbf")
    if nbf is not None and (not _numeric(nbf) or now < nbf - LEEWAY):
        raise TokenRejected("token not valid yet")


def _numeric(value: Any) -> bool:
    # JSON allows NaN and Infinity through Python's parser: neither is a NumericDate
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
