"""ldap-auth: HTTP Basic credentials bound against an LDAP server as ``<uid>=<user>,<base_dn>``.

A successful bind is mapped to the consumer whose credential holds that DN, so that
consumer-level plugins and consumer-restriction apply to LDAP users too (as in APISIX).
Configuration in ``config``, the directory client in ``directory``, per-request work in
``runtime``.
"""

from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.plugins.ldap_auth.config import (
    LdapAuthConfig,
    LdapAuthCredential,
    dn_error,
    uri_error,
)
from portico.gateway.plugins.ldap_auth.runtime import LdapAuthRuntime

__all__ = ["PLUGIN", "LdapAuthConfig", "LdapAuthCredential", "dn_error", "uri_error"]

PLUGIN = PluginSpec(
    name="ldap-auth",
    category=Category.AUTHENTICATION,
    order=104,
    reorderable=True,
    config=LdapAuthConfig,
    consumer=LdapAuthCredential,
    description="Authenticates HTTP Basic credentials by binding to `ldap_uri` as "
    "<uid>=<user>,<base_dn>; the consumer is the one holding that DN; failure → 401, "
    "directory unreachable → 503.",
    runtime=LdapAuthRuntime,
)
