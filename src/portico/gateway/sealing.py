"""Consumer secrets for the runtime: re-exported from the kernel (:mod:`portico.core.sealing`),
where the code lives because the management service, the marketplace and the portal use it too.
"""

from portico.core.sealing import (
    PBKDF2,
    PBKDF2_ITERATIONS,
    SALT_BYTES,
    SecretBox,
    hash_password,
    secret_box,
    verify_password_hash,
)

__all__ = [
    "PBKDF2",
    "PBKDF2_ITERATIONS",
    "SALT_BYTES",
    "SecretBox",
    "hash_password",
    "secret_box",
    "verify_password_hash",
]
