"""How consumer secrets travel to gateways and are checked there.

The management service stores basic-auth passwords as PBKDF2 hashes and keeps recoverable
secrets (jwt-auth's HMAC ``secret``) encrypted with Fernet under a key derived from the server
secret. Gateways verify the hashes and open the encrypted secrets with the same derived key,
so a standalone node is started with the control plane's secret (``PORTICO_SECRET_KEY``), as
APISIX nodes share their ``data_encryption`` keyring. Kernel code: the gateway runtime, the
management service, the marketplace and the portal all use it, and it imports none of them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

PBKDF2 = "pbkdf2_sha256"
PBKDF2_ITERATIONS = 10_000
SALT_BYTES = 16
_HKDF_INFO = b"portico consumer credentials v1"


def hash_password(password: str, *, iterations: int = PBKDF2_ITERATIONS) -> str:
    """``pbkdf2_sha256$<iterations>$<salt b64>$<hash b64>``."""
    salt = secrets.token_bytes(SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    return f"{PBKDF2}${iterations}${_b64(salt)}${_b64(digest)}"


def verify_password_hash(stored: str, presented: str) -> bool:
    """Whether ``presented`` is the password hashed in ``stored``; constant-time compare."""
    try:
        scheme, iterations, salt, digest = stored.split("$")
        if scheme != PBKDF2 or not iterations.isdigit():
            return False
        expected = base64.b64decode(digest, validate=True)
        actual = hashlib.pbkdf2_hmac(
            "sha256", presented.encode(), base64.b64decode(salt, validate=True), int(iterations)
        )
    except (ValueError, binascii.Error):
        return False
    return hmac.compare_digest(actual, expected)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


class SecretBox:
    """Fernet under keys derived (HKDF-SHA256) from the server secrets: encrypts with the
    current one, decrypts with any still accepted during a rotation."""

    def __init__(self, server_keys: Sequence[str], *, purpose: bytes = _HKDF_INFO) -> None:
        if not server_keys:
            raise ValueError("no server key")
        self._fernet = MultiFernet([Fernet(_derive(key, purpose)) for key in server_keys])

    def encrypt(self, value: str) -> str:
        return self._fernet.encrypt(value.encode()).decode()

    def decrypt(self, token: str) -> str:
        """The clear value; ``ValueError`` when no accepted key opens it."""
        try:
            return self._fernet.decrypt(token.encode()).decode()
        except InvalidToken:
            raise ValueError("cannot be decrypted with the server's keys") from None


def _derive(server_key: str, purpose: bytes) -> bytes:
    # a key of its own for each purpose: the server secret also signs access tokens
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose)
    return base64.urlsafe_b64encode(key.derive(server_key.encode()))


@lru_cache(maxsize=8)
def secret_box(server_keys: tuple[str, ...], purpose: bytes = _HKDF_INFO) -> SecretBox:
    """One box per set of server keys and purpose (deriving is cheap, but there is no need
    per request). ``purpose`` (HKDF info) gives each kind of secret keys of its own; the
    default is the consumer credentials' (and the ID-token keys')."""
    return SecretBox(server_keys, purpose=purpose)
