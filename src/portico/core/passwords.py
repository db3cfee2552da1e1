"""Password hashing with argon2id (argon2-cffi's RFC 9106 low-memory profile)."""

from __future__ import annotations

from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_hasher = PasswordHasher()


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """Constant-time verification. With no hash (unknown account, account without a password)
    a dummy hash is verified anyway, so that the answer takes as long as a real one and the
    timing does not tell whether the account exists."""
    try:
        if password_hash is None:
            _hasher.verify(_dummy_hash(), password + "\x00")
            return False
        return _hasher.verify(password_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher.hash("portico-dummy-password")
