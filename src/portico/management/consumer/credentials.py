"""Consumer credentials: how their secrets are kept at rest, shown to clients and given to
gateways.

No secret field of a credential (``ConsumerCredential.secret_fields``) is stored in clear:

- key-auth ``key``: SHA-256 hex. Gateways find the consumer by the hash of the key presented,
  so the hash must be deterministic; a generated key carries 256 random bits, which makes
  salting and stretching pointless. The first characters are kept as a hint for people.
- basic-auth ``password``: PBKDF2-HMAC-SHA256 with a per-credential salt and 10,000
  iterations. Not argon2 like account passwords: a gateway verifies this hash on every request,
  and a memory-hard hash tuned for interactive logins (tens of milliseconds and MiBs each)
  would make every Basic request that slow and hand attackers a cheap way to exhaust nodes.
- edge-auth ``client_secret``: SHA-256 hex, as key-auth's key (generated with 256 random
  bits, or at least 32 characters); the ``client_id`` is an identifier and stays in clear.
- any other secret field (jwt-auth ``secret``): encrypted with Fernet under a key derived from
  the server secret, because the gateway must recover an HMAC secret to verify signatures.

Clients never see a secret back: key-auth shows ``keyHint``, other secret fields (of
credentials and of consumer-scope plugin configurations) show ``MASK``; sending a response's
value back unchanged keeps the stored secret.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from portico.core.sealing import SecretBox, hash_password, secret_box, verify_password_hash
from portico.core.validation import json_pointer
from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.plugins.registry import (
    PLUGINS,
    PluginCheckError,
    check_plugin,
    reason_of,
)

__all__ = ["SecretBox", "hash_password", "secret_box", "verify_password_hash"]

MASK = "********"
KEY_HINT_LENGTH = 4
GENERATED_KEY_BYTES = 32

#: plugin → (stored field that identifies the consumer, the field a client sends). Two
#: consumers of an org holding the same value could not be told apart by the gateway.
IDENTITY: Mapping[str, tuple[str, str]] = {
    "key-auth": ("key_hash", "key"),
    "basic-auth": ("username", "username"),
    "jwt-auth": ("key", "key"),
    "ldap-auth": ("user_dn", "user_dn"),
    "edge-auth": ("client_id", "client_id"),
}


# ------------------------------------------------------------------------------ primitives


def generate_key() -> str:
    return secrets.token_urlsafe(GENERATED_KEY_BYTES)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def generate_client_id() -> str:
    return secrets.token_hex(16)


# ------------------------------------------------------------------------------ stored forms


def seal(plugin: str, credential: Mapping[str, Any], box: SecretBox) -> dict[str, Any]:
    """The stored form of a validated credential (``model_dump(exclude_none=True)``)."""
    clear = dict(credential)
    if plugin == "key-auth":
        key = str(clear.pop("key"))
        return {"key_hash": hash_key(key), "key_hint": key[:KEY_HINT_LENGTH], **clear}
    if plugin == "basic-auth":
        password = str(clear.pop("password"))
        return {**clear, "password_hash": hash_password(password)}
    if plugin == "edge-auth":
        client_secret = str(clear.pop("client_secret"))
        return {**clear, "client_secret_hash": hash_key(client_secret)}
    spec = PLUGINS[plugin]
    assert spec.consumer is not None
    for name in spec.consumer.secret_fields:
        value = clear.pop(name, None)
        if value is not None:
            clear[f"{name}_encrypted"] = box.encrypt(str(value))
    return clear


def public_credential(plugin: str, stored: Mapping[str, Any]) -> dict[str, Any]:
    if plugin == "key-auth":
        return {"keyHint": stored.get("key_hint", "")}
    if plugin == "basic-auth":
        return {**{k: v for k, v in stored.items() if k != "password_hash"}, "password": MASK}
    if plugin == "edge-auth":
        return {"client_id": stored.get("client_id", ""), "client_secret": MASK}
    shown = {k: v for k, v in stored.items() if not k.endswith("_encrypted")}
    for name in stored:
        if name.endswith("_encrypted"):
            shown[name.removesuffix("_encrypted")] = MASK
    return shown


def gateway_credential(plugin: str, stored: Mapping[str, Any]) -> dict[str, Any]:
    """What a gateway needs to authenticate the consumer: hashes as they are, encrypted
    secrets still encrypted (the gateway holds the key), no hint meant for people."""
    return {k: v for k, v in stored.items() if k != "key_hint"}


def public_plugins(plugins: Mapping[str, Any]) -> dict[str, Any]:
    """A consumer's ``plugins`` as clients see them: credentials in their public form, the
    secret fields of other plugins' configurations masked."""
    shown: dict[str, Any] = {}
    for name, stored in plugins.items():
        spec = PLUGINS.get(name)
        if spec is not None and spec.consumer is not None:
            shown[name] = public_credential(name, stored)
        elif spec is not None:
            shown[name] = mask_fields(stored, spec.config.secret_fields)
        else:
            shown[name] = stored
    return shown


# ------------------------------------------------------------------------- what clients send


def prepare(
    name: str, raw: dict[str, Any], current: Any, box: SecretBox
) -> tuple[dict[str, Any], dict[str, str] | None]:
    """The stored form of ``{name: raw}`` sent for a consumer that holds ``current`` for it
    (or None), and the credential generated for it (to be shown once), if any. A credential
    is checked against its plugin's consumer model, anything else with the runtime's check.
    The failure is a ``PluginCheckError``."""
    spec = PLUGINS.get(name)
    if spec is not None and spec.consumer is not None:
        return _credential(spec, raw, current if isinstance(current, dict) else None, box)
    if spec is not None and spec.category is Category.AUTHENTICATION:
        raise PluginCheckError(
            name, f"{name} keeps no credential on a consumer; attach it to a service or a route"
        )
    if spec is not None and not spec.consumer_scope:
        raise PluginCheckError(
            name, f"{name} acts before the consumer is known; attach it to a service or a route"
        )
    config, missing = unmasked_fields(
        raw, current, spec.config.secret_fields if spec else frozenset()
    )
    if missing is not None:
        raise PluginCheckError(name, _nothing_to_keep(missing), "/" + missing.replace(".", "/"))
    check_plugin(name, config)
    return config, None


def _credential(
    spec: PluginSpec, raw: dict[str, Any], current: dict[str, Any] | None, box: SecretBox
) -> tuple[dict[str, Any], dict[str, str] | None]:
    name = spec.name
    assert spec.consumer is not None
    if name == "key-auth":
        if current is not None and raw == public_credential(name, current):
            return dict(current), None  # the response's hint sent back: keep the key
        if "keyHint" in raw:
            raise PluginCheckError(
                name,
                'keyHint does not match the current key; send {} for a new key or "key" to set one',
                "/keyHint",
            )
        if not raw:
            key = generate_key()
            return seal(name, {"key": key}, box), {"key": key}
    if name == "edge-auth":
        return _edge_credential(spec, raw, current, box)
    clear, kept_hash = dict(raw), None
    for field in sorted(spec.consumer.secret_fields):
        if clear.get(field) != MASK:
            continue
        if name == "basic-auth" and current is not None and "password_hash" in current:
            kept_hash = current["password_hash"]
        elif current is not None and f"{field}_encrypted" in current:
            try:
                clear[field] = box.decrypt(current[f"{field}_encrypted"])
            except ValueError:
                raise PluginCheckError(
                    name, f"the stored {field} cannot be read any more; send it again", f"/{field}"
                ) from None
        else:
            raise PluginCheckError(name, _nothing_to_keep(field), f"/{field}")
    try:
        credential = spec.consumer.model_validate(clear).model_dump(exclude_none=True)
    except ValidationError as error:
        first = min(error.errors(), key=lambda e: e["type"] != "missing")
        raise PluginCheckError(name, reason_of(first), json_pointer(first["loc"])) from None
    if kept_hash is not None:
        del credential["password"]
        return {**credential, "password_hash": kept_hash}, None
    return seal(name, credential, box), None


def _edge_credential(
    spec: PluginSpec, raw: dict[str, Any], current: dict[str, Any] | None, box: SecretBox
) -> tuple[dict[str, Any], dict[str, str] | None]:
    """An edge-auth credential: ``{}`` generates both the client id and secret; a client id
    alone gets a generated secret; the answer's public form sent back (the secret masked)
    keeps the stored one. What was generated is shown once."""
    assert spec.consumer is not None
    if current is not None and raw == public_credential(spec.name, current):
        return dict(current), None
    clear = dict(raw)
    if clear.get("client_secret") == MASK:
        raise PluginCheckError(
            spec.name,
            "client_secret is masked but the client id changed; send a new client_secret or "
            "omit it to have one generated",
            "/client_secret",
        )
    generated: dict[str, str] = {}
    if "client_id" not in clear:
        clear["client_id"] = generated["client_id"] = generate_client_id()
    if "client_secret" not in clear:
        clear["client_secret"] = generated["client_secret"] = generate_key()
    try:
        credential = spec.consumer.model_validate(clear).model_dump(exclude_none=True)
    except ValidationError as error:
        first = min(error.errors(), key=lambda e: e["type"] != "missing")
        raise PluginCheckError(spec.name, reason_of(first), json_pointer(first["loc"])) from None
    if generated:  # the id is shown with a generated secret: the pair is what a client needs
        generated = {"client_id": credential["client_id"], **generated}
    return seal(spec.name, credential, box), generated or None


def _nothing_to_keep(field: str) -> str:
    return f'{field} is masked ("{MASK}") but no {field} is stored to keep; send the value'


# ---------------------------------------------------------------- masked configuration fields


def mask_fields(config: Any, fields: frozenset[str]) -> Any:
    """``config`` with the (dotted) ``fields`` present in it replaced by ``MASK``."""
    if not fields or not isinstance(config, dict):
        return config
    masked = _copy(config)
    for path in fields:
        parent, last = _parent(masked, path.split("."))
        if parent is not None and last in parent:
            parent[last] = MASK
    return masked


def unmasked_fields(config: Any, stored: Any, fields: frozenset[str]) -> tuple[Any, str | None]:
    """``config`` with every masked field given its ``stored`` value; or, for a masked field
    with nothing stored to keep, the field's dotted path as the second item."""
    if not fields or not isinstance(config, dict):
        return config, None
    restored = _copy(config)
    for path in sorted(fields):
        parent, last = _parent(restored, path.split("."))
        if parent is None or parent.get(last) != MASK:
            continue
        kept_parent, _ = (
            _parent(stored, path.split(".")) if isinstance(stored, dict) else (None, "")
        )
        if kept_parent is None or last not in kept_parent:
            return config, path
        parent[last] = _copy(kept_parent[last])
    return restored, None


def _parent(config: dict[str, Any], parts: list[str]) -> tuple[dict[str, Any] | None, str]:
    node: Any = config
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    return (node if isinstance(node, dict) else None), parts[-1]


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
