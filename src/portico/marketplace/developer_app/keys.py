"""An app's ``key-auth`` key: made here, sealed at rest, opened only to be given to a
gateway. Keys of their own under the server's secrets (HKDF purpose below): a leaked
connection secret box opens no app key, and the other way round."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from portico.core.sealing import SecretBox, secret_box

SEALING_PURPOSE = b"portico developer app keys v1"
#: 256 random bits, URL-safe: fits key-auth's 8..512 characters and any header
KEY_BYTES = 32
HINT_LENGTH = 6


def box_for(server_keys: Sequence[str]) -> SecretBox:
    """The box that seals and opens app keys (``settings.signing_keys()``)."""
    return secret_box(tuple(server_keys), SEALING_PURPOSE)


def new_key() -> str:
    return secrets.token_urlsafe(KEY_BYTES)


def hint(key: str) -> str:
    return key[:HINT_LENGTH]
