"""The browser flow's cookies: sealed with AES-GCM (encrypted and authenticated), and PKCE.

The key is derived (HKDF-SHA256) from ``session_secret``, or from ``client_secret`` when the
route sets none, so every gateway node of the environment opens the cookies any of them set,
and no key is stored anywhere. The cookie's name and the client id are the AES-GCM associated
data: a login-state cookie cannot be replayed as a session, nor a cookie of one route's client
on another's. A cookie that does not open (tampered, another key, expired) is no cookie.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import secrets
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_NONCE = 12


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CookieBox:
    def __init__(self, secret: str, client_id: str) -> None:
        key = HKDF(
            algorithm=hashes.SHA256(),
            length=32,
            salt=None,
            info=b"portico openid-connect session v1",
        ).derive(secret.encode())
        self._aead = AESGCM(key)
        self._client_id = client_id.encode()

    def seal(self, name: str, payload: dict[str, Any]) -> str:
        nonce = os.urandom(_NONCE)
        data = json.dumps(payload, separators=(",", ":")).encode()
        return _b64(nonce + self._aead.encrypt(nonce, data, self._aad(name)))

    def open(self, name: str, value: str | None, now: float) -> dict[str, Any] | None:
        """The payload of a cookie this box sealed under ``name``, unless its ``expires``
        (epoch seconds) has passed; None for anything else."""
        if not value:
            return None
        try:
            raw = _unb64(value)
            data = self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], self._aad(name))
            payload = json.loads(data)
        except (InvalidTag, ValueError, binascii.Error):
            return None
        if not isinstance(payload, dict):
            return None
        expires = payload.get("expires")
        if not isinstance(expires, int | float) or now >= expires:
            return None
        return payload

    def _aad(self, name: str) -> bytes:
        return name.encode() + b"\x00" + self._client_id


def random_token() -> str:
    """A state, a nonce or a PKCE verifier: 256 random bits, URL-safe (43 characters)."""
    return secrets.token_urlsafe(32)


def pkce_challenge(verifier: str) -> str:
    """RFC 7636 S256: base64url(SHA-256(verifier)) without padding."""
    return _b64(hashlib.sha256(verifier.encode()).digest())


def cookie_header(name: str, value: str, *, secure: bool, max_age: int | None = None) -> str:
    """A Set-Cookie value: the whole site (the route's paths and its callback), script
    cannot read it, sent on top-level navigations back from the provider (Lax)."""
    parts = [f"{name}={value}", "Path=/", "HttpOnly", "SameSite=Lax"]
    if max_age is not None:
        parts.append(f"Max-Age={max_age}")
    if secure:
        parts.append("Secure")
    return "; ".join(parts)
