"""``GET /api/admin/v1/.well-known/openid-configuration``: the admin API's ID tokens described
as an OpenID Provider's (OpenID Connect Discovery 1.0), so that a relying party, such as a
gateway route with the openid-connect plugin in ``bearer_only`` mode (``client_id``
``portico-marketplace``), finds the issuer and the JWKS the portal publishes and verifies the
tokens offline. Tokens are issued by ``/auth/token`` (password sign-in), not by an
authorization endpoint: the document names none, so it serves bearer validation only.
"""

from __future__ import annotations

from typing import Any

from portico.marketplace.auth.keys import ALGORITHM

#: where the portal serves the key set (``portico.portal.jwks``; the marketplace cannot import
#: the portal, so the path is spelt here)
JWKS_PATH = "/api/portal/v1/.well-known/jwks.json"


def discovery_document(issuer: str, origin: str) -> dict[str, Any]:
    """``issuer``: the tokens' ``iss`` (the document is served at issuer +
    ``/.well-known/openid-configuration``, as Discovery §4 asks); ``origin``: the control
    plane's public URL."""
    return {
        "issuer": issuer,
        "jwks_uri": origin + JWKS_PATH,
        "token_endpoint": issuer + "/auth/token",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": [ALGORITHM],
        "grant_types_supported": ["password", "refresh_token"],
    }
