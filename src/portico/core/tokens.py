"""Access tokens (signed JWT, ``kid`` in the header, short-lived) and opaque refresh tokens.

Access tokens are HS256 JWTs signed with the process's secret key; ``kid`` names the key so
that a rotation (``PORTICO_PREVIOUS_SECRET_KEYS``) keeps older tokens valid until they
expire. Expiry is checked against :class:`portico.core.clock.Clock`, not the system time
directly, so tests can move time.

Refresh tokens are 256-bit random strings; only their SHA-256 is stored (they are high
entropy, so a slow hash adds nothing), each use rotates them, and a second use of a rotated
token revokes its whole family (the token was stolen, or the client is broken).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import jwt

from portico.core.clock import Clock
from portico.core.errors import TokenExpired, Unauthorized

ALGORITHM = "HS256"
REFRESH_TOKEN_BYTES = 32


def key_id(key: str) -> str:
    return hashlib.sha256(b"portico-kid:" + key.encode()).hexdigest()[:16]


def hash_opaque_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_opaque_token() -> str:
    return secrets.token_urlsafe(REFRESH_TOKEN_BYTES)


def same_digest(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


@dataclass(frozen=True)
class IssuedToken:
    token: str
    expires_at: datetime


class AccessTokenService:
    def __init__(
        self, keys: list[str], clock: Clock, *, ttl_seconds: int = 3600, audience: str
    ) -> None:
        if not keys or not keys[0]:
            raise ValueError("at least one signing key is required")
        self._keys = {key_id(k): k for k in keys}
        self._current = key_id(keys[0])
        self._clock = clock
        self.ttl = timedelta(seconds=ttl_seconds)
        self.audience = audience

    def issue(self, subject: str, **claims: Any) -> IssuedToken:
        now = self._clock.now()
        expires_at = now + self.ttl
        payload = {
            **claims,
            "sub": subject,
            "aud": self.audience,
            "iat": int(now.timestamp()),
            "exp": int(expires_at.timestamp()),
            "jti": uuid.uuid4().hex,
        }
        token = jwt.encode(
            payload, self._keys[self._current], algorithm=ALGORITHM, headers={"kid": self._current}
        )
        return IssuedToken(token, expires_at.replace(microsecond=0))

    def verify(self, token: str) -> dict[str, Any]:
        """The claims of a valid token; :class:`Unauthorized` or :class:`TokenExpired`."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as error:
            raise Unauthorized("invalid token") from error
        key = self._keys.get(str(header.get("kid", "")))
        if key is None or header.get("alg") != ALGORITHM:
            raise Unauthorized("invalid token")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[ALGORITHM],
                audience=self.audience,
                # time is checked below against the injectable clock, not here
                options={
                    "verify_exp": False,
                    "verify_iat": False,
                    "verify_nbf": False,
                    "require": ["exp", "iat", "sub", "aud"],
                },
            )
        except jwt.PyJWTError as error:
            raise Unauthorized("invalid token") from error
        if not isinstance(claims["exp"], int) or self._clock.timestamp() >= claims["exp"]:
            raise TokenExpired()
        return claims
