"""openid-connect: authenticate with an OpenID Provider found through its ``discovery`` URL.

The discovery document and its JWKS are fetched and cached (``provider``). With
``bearer_only`` the plugin only validates bearer tokens (issuer, audience, signature, expiry:
``tokens``); otherwise it also runs the authorization-code flow with PKCE for browsers and
keeps an encrypted session cookie (``session``), which needs ``client_secret``. The
per-request flow is in ``runtime``, the configuration model in ``config``.
"""

from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.plugins.openid_connect.config import (
    SIGNING_ALGORITHMS,
    OpenidConnectConfig,
)
from portico.gateway.plugins.openid_connect.runtime import OpenidConnectRuntime

__all__ = ["PLUGIN", "SIGNING_ALGORITHMS", "OpenidConnectConfig"]

PLUGIN = PluginSpec(
    name="openid-connect",
    category=Category.AUTHENTICATION,
    order=103,
    reorderable=True,
    config=OpenidConnectConfig,
    description="Authenticates with an OpenID Provider (discovery and JWKS cached); "
    "bearer_only validates bearer tokens' issuer, audience, signature and expiry; "
    "alg none or an unknown kid → 401; otherwise browsers log in with the "
    "authorization-code flow (PKCE) and keep an encrypted session cookie.",
    runtime=OpenidConnectRuntime,
)
