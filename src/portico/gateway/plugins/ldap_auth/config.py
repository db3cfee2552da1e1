"""ldap-auth's configuration and consumer credential (pydantic models, kept apart from the
runtime, which is built only where a route attaches the plugin)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from pydantic import Field, ValidationInfo, field_validator

from portico.gateway.plugins.base import ConsumerCredential, PluginConfig

_ATTRIBUTE = r"[A-Za-z][A-Za-z0-9-]{0,63}"  # RFC 4512 descriptor
_ATTRIBUTE_OR_OID = re.compile(rf"{_ATTRIBUTE}|\d+(\.\d+)+")
_UNESCAPED = r"(?<!\\)"


def dn_error(field: str, dn: str) -> str | None:
    """Why ``dn`` is not an RFC 4514 distinguished name (``attr=value`` RDNs joined by
    unescaped commas, multi-valued with ``+``), or None."""
    for rdn in re.split(_UNESCAPED + ",", dn):
        for assertion in re.split(_UNESCAPED + r"\+", rdn):
            attribute, equals, value = assertion.partition("=")
            if (
                not equals
                or not value.strip()
                or not _ATTRIBUTE_OR_OID.fullmatch(attribute.strip())
            ):
                return (
                    f'{field} "{dn}" is not a distinguished name, e.g. ou=users,dc=example,dc=org'
                )
    return None


def uri_error(uri: str) -> str | None:
    message = f'ldap_uri "{uri}" must be ldap://host[:port] or ldaps://host[:port]'
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return message
    if parts.scheme not in ("ldap", "ldaps") or not parts.hostname or port == 0:
        return message
    if parts.username or parts.password or parts.path not in ("", "/"):
        return message
    return message if parts.query or parts.fragment else None


class LdapAuthConfig(PluginConfig):
    ldap_uri: str = Field(
        min_length=1,
        max_length=1024,
        description="LDAP server: ldap://host[:port] (389) or ldaps://host[:port] (636).",
    )
    base_dn: str = Field(
        min_length=1,
        max_length=1024,
        description="DN under which users are bound, e.g. ou=users,dc=example,dc=org.",
    )
    uid: str = Field(
        "cn",
        pattern=rf"^{_ATTRIBUTE}$",
        description="Attribute naming the user in its DN: <uid>=<username>,<base_dn>.",
    )
    use_tls: bool = Field(
        False,
        description="Use TLS: StartTLS on an ldap:// connection (ldaps:// always uses TLS).",
    )
    tls_verify: bool = Field(False, description="Verify the LDAP server's TLS certificate.")

    @field_validator("ldap_uri")
    @classmethod
    def _uri(cls, uri: str) -> str:
        reason = uri_error(uri)
        if reason is not None:
            raise ValueError(reason)
        return uri

    @field_validator("base_dn")
    @classmethod
    def _base_dn(cls, dn: str, info: ValidationInfo) -> str:
        reason = dn_error(str(info.field_name), dn)
        if reason is not None:
            raise ValueError(reason)
        return dn


class LdapAuthCredential(ConsumerCredential):
    user_dn: str = Field(
        min_length=1,
        max_length=1024,
        description="DN this consumer binds as, e.g. cn=user01,ou=users,dc=example,dc=org.",
    )

    @field_validator("user_dn")
    @classmethod
    def _user_dn(cls, dn: str) -> str:
        reason = dn_error("user_dn", dn)
        if reason is not None:
            raise ValueError(reason)
        return dn
