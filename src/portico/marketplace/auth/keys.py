"""ID tokens of the marketplace admin API: ES256 JWTs with ``kid``, verifiable by anyone
with the public JWKS (``GET /api/portal/v1/.well-known/jwks.json``).

The signing key is made on first use and kept in the store, its private half encrypted under
the server secret, so every control-plane replica signs and verifies with the same keys.
Keys are cached in the process; a token naming an unknown ``kid`` makes the cache reload
(another replica may have rotated). Expiry is checked against the injectable clock.

A client sends the same token with every request until it expires: the claims of the last
``VERIFIED_TOKENS`` tokens verified are kept until their expiry, under a keyed BLAKE2b of the
token (the process's own random key), with the ``kid`` that signed each, so that a repeated
token costs a hash, not the signature check and PyJWT's parsing (~0.3 ms, a tenth of a
catalogue page's fixed cost).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import Clock
from portico.core.errors import TokenExpired, Unauthorized
from portico.core.expiring_lru import ExpiringLru
from portico.core.sealing import SecretBox
from portico.marketplace.auth.models import IdpSigningKey
from portico.marketplace.auth.repository import SigningKeyRepository

ALGORITHM = "ES256"
AUDIENCE = "portico-marketplace"
#: how many verified tokens are kept (see the module's docstring)
VERIFIED_TOKENS = 1024


@dataclass(frozen=True)
class IssuedIdToken:
    token: str
    expires_at: datetime
    expires_in: int


def _kid(public_jwk: dict[str, Any]) -> str:
    # RFC 7638 thumbprint members of an EC key, in lexicographic order
    canonical = json.dumps(
        {k: public_jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


class IdTokenService:
    def __init__(
        self, box: SecretBox, clock: Clock, *, issuer: str, ttl_seconds: int = 3600
    ) -> None:
        self._box = box
        self._clock = clock
        self.issuer = issuer
        self.ttl = timedelta(seconds=ttl_seconds)
        self._signing: tuple[str, ec.EllipticCurvePrivateKey] | None = None
        self._public: dict[str, Any] = {}  # kid → public key object
        self._lock = asyncio.Lock()
        self._verified: ExpiringLru[bytes, tuple[str, dict[str, Any]]] = ExpiringLru(
            VERIFIED_TOKENS
        )
        self._token_key = secrets.token_bytes(32)

    async def _load(self, session: AsyncSession) -> None:
        rows = await SigningKeyRepository(session).all_by_age()
        self._public = {row.kid: ECAlgorithm.from_jwk(json.dumps(row.public_jwk)) for row in rows}
        current = [row for row in rows if row.retired_at is None]
        if current:
            row = current[-1]
            pem = self._box.decrypt(row.private_key_encrypted).encode()
            key = serialization.load_pem_private_key(pem, password=None)
            assert isinstance(key, ec.EllipticCurvePrivateKey)
            self._signing = (row.kid, key)

    async def _create(self, session: AsyncSession) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        public_jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
        kid = _kid(public_jwk)
        public_jwk.update({"kid": kid, "alg": ALGORITHM, "use": "sig"})
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        session.add(
            IdpSigningKey(
                kid=kid,
                algorithm=ALGORITHM,
                private_key_encrypted=self._box.encrypt(pem),
                public_jwk=public_jwk,
                created_at=self._clock.now(),
            )
        )
        await session.flush()
        self._signing = (kid, key)
        self._public[kid] = key.public_key()

    async def issue(
        self, session: AsyncSession, *, user_id: uuid.UUID, email: str
    ) -> IssuedIdToken:
        async with self._lock:
            if self._signing is None:
                await self._load(session)
            if self._signing is None:
                await self._create(session)
        assert self._signing is not None
        kid, key = self._signing
        now = self._clock.now()
        expires_at = now + self.ttl
        claims = {
            "iss": self.issuer,
            "aud": AUDIENCE,
            "sub": str(user_id),
            "email": email,
            "iat": int(now.timestamp()),
            "exp": int(expires_at.timestamp()),
            "jti": uuid.uuid4().hex,
        }
        token = jwt.encode(claims, key, algorithm=ALGORITHM, headers={"kid": kid})
        return IssuedIdToken(
            token, expires_at.replace(microsecond=0), int(self.ttl.total_seconds())
        )

    async def verify(self, session: AsyncSession, token: str) -> dict[str, Any]:
        """The claims of a valid token; :class:`Unauthorized` or :class:`TokenExpired`."""
        digest = hashlib.blake2b(token.encode(), key=self._token_key, digest_size=32).digest()
        known = self._verified.get(digest, self._clock.timestamp())
        # a key no longer published (reloaded without it) no longer vouches for its tokens
        if known is not None and known[0] in self._public:
            return dict(known[1])  # the kept claims stay as verified, whatever a caller does
        kid, claims = await self._verify_signed(session, token)
        expires = claims["exp"]
        if not isinstance(expires, int) or self._clock.timestamp() >= expires:
            raise TokenExpired()
        self._verified.put(digest, (kid, claims), expires)
        return dict(claims)

    async def _verify_signed(self, session: AsyncSession, token: str) -> tuple[str, dict[str, Any]]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as error:
            raise Unauthorized("invalid token") from error
        kid = str(header.get("kid", ""))
        if header.get("alg") != ALGORITHM or not kid:
            raise Unauthorized("invalid token")
        if kid not in self._public:
            async with self._lock:
                await self._load(session)
        public = self._public.get(kid)
        if public is None:
            raise Unauthorized("invalid token")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                public,
                algorithms=[ALGORITHM],
                audience=AUDIENCE,
                issuer=self.issuer,
                options={
                    "verify_exp": False,
                    "verify_iat": False,
                    "verify_nbf": False,
                    "require": ["exp", "iat", "sub", "aud", "iss"],
                },
            )
        except jwt.PyJWTError as error:
            raise Unauthorized("invalid token") from error
        return kid, claims

    async def jwks(self, session: AsyncSession) -> dict[str, Any]:
        rows = await SigningKeyRepository(session).all_by_age()
        return {"keys": [row.public_jwk for row in rows]}
