"""Credential secrets at rest: password hashes, encrypted secrets, masks (no store needed)."""

from __future__ import annotations

import base64

import pytest

from portico.management.consumer import credentials
from portico.management.consumer.credentials import MASK, SecretBox

SERVER_KEY = "test-secret-key-0123456789abcdef0123456789"


def test_password_hash_round_trips_and_is_salted() -> None:
    stored = credentials.hash_password("s3cret:pässword")
    scheme, iterations, salt, digest = stored.split("$")
    assert (scheme, iterations) == ("pbkdf2_sha256", "10000")
    assert len(base64.b64decode(salt)) == 16 and len(base64.b64decode(digest)) == 32
    assert "s3cret" not in stored
    assert credentials.verify_password_hash(stored, "s3cret:pässword")
    assert not credentials.verify_password_hash(stored, "s3cret:passwort")
    assert not credentials.verify_password_hash(stored, "")
    # a fresh salt each time: equal passwords do not give equal hashes
    assert credentials.hash_password("s3cret:pässword") != stored


@pytest.mark.parametrize(
    "stored",
    ["", "plain", "argon2$1$a$b", "pbkdf2_sha256$many$YQ==$YQ==", "pbkdf2_sha256$1$!!$YQ=="],
)
def test_a_malformed_stored_hash_verifies_nothing(stored: str) -> None:
    assert not credentials.verify_password_hash(stored, "anything")


def test_secrets_are_encrypted_under_the_server_key_and_survive_a_rotation() -> None:
    box = SecretBox([SERVER_KEY])
    secret = "an-hmac-secret-of-at-least-32-bytes!!"
    token = box.encrypt(secret)
    assert token != secret and secret not in token
    assert box.encrypt(secret) != token  # Fernet: a fresh IV each time
    assert box.decrypt(token) == secret
    with pytest.raises(ValueError, match="cannot be decrypted"):
        SecretBox(["another-server-key-0123456789abcdef"]).decrypt(token)
    # after a rotation the previous key still opens what it sealed; new seals use the new key
    rotated = SecretBox(["the-new-server-key-0123456789abcdef", SERVER_KEY])
    assert rotated.decrypt(token) == secret
    with pytest.raises(ValueError, match="cannot be decrypted"):
        box.decrypt(rotated.encrypt(secret))


def test_keys_are_hashed_and_generated_keys_are_256_bits() -> None:
    key = credentials.generate_key()
    assert len(base64.urlsafe_b64decode(key + "=")) == 32
    assert credentials.generate_key() != key
    assert credentials.hash_key("abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


def test_stored_public_and_gateway_forms() -> None:
    box = SecretBox([SERVER_KEY])
    key_auth = credentials.seal("key-auth", {"key": "abcdefgh123"}, box)
    assert key_auth == {"key_hash": credentials.hash_key("abcdefgh123"), "key_hint": "abcd"}
    assert credentials.public_credential("key-auth", key_auth) == {"keyHint": "abcd"}
    assert credentials.gateway_credential("key-auth", key_auth) == {
        "key_hash": credentials.hash_key("abcdefgh123")
    }
    basic = credentials.seal("basic-auth", {"username": "u", "password": "pw"}, box)
    assert set(basic) == {"username", "password_hash"}
    assert credentials.public_credential("basic-auth", basic) == {"username": "u", "password": MASK}
    jwt = credentials.seal("jwt-auth", {"key": "k", "secret": "s" * 32, "algorithm": "HS256"}, box)
    assert box.decrypt(jwt["secret_encrypted"]) == "s" * 32 and "secret" not in jwt
    assert credentials.public_credential("jwt-auth", jwt) == {
        "key": "k",
        "algorithm": "HS256",
        "secret": MASK,
    }


def test_configuration_secrets_are_masked_and_restored() -> None:
    fields = frozenset({"redis_url", "auth.password"})
    stored = {"count": 1, "redis_url": "redis://:pw@h", "auth": {"user": "a", "password": "p"}}
    shown = credentials.mask_fields(stored, fields)
    assert shown == {"count": 1, "redis_url": MASK, "auth": {"user": "a", "password": MASK}}
    assert stored["redis_url"] == "redis://:pw@h"  # a copy was masked
    assert credentials.unmasked_fields(shown, stored, fields) == (stored, None)
    changed = {**shown, "redis_url": "redis://other"}
    assert credentials.unmasked_fields(changed, stored, fields)[0]["redis_url"] == "redis://other"
    assert credentials.unmasked_fields({"redis_url": MASK}, None, fields)[1] == "redis_url"
    assert credentials.mask_fields({"count": 1}, fields) == {"count": 1}
