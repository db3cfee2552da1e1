"""edge-auth: the seed product's edge token issuer and validator (``helix-auth`` in its
documents).

``mode: generate`` makes the route an OAuth 2.0 client-credentials token endpoint (RFC 6749
§4.4): an app authenticates with its client id and secret (HTTP Basic, or form fields) and
gets an HS256 JWT (``iat``, ``exp``, ``sub`` = the client id, ``jti``). ``mode: validate``
requires such a token (``validate_auth_type: jwt-auth``) or the app's client id as an API key
(``key-auth``). Apps get their credential with ``plugins: {"edge-auth": {}}``.

Its configuration is in ``config``; its per-request work in ``runtime`` (tokens in ``tokens``).
"""

from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.plugins.edge_auth.config import EdgeAuthConfig, EdgeAuthCredential
from portico.gateway.plugins.edge_auth.runtime import EdgeAuthRuntime

PLUGIN = PluginSpec(
    name="edge-auth",
    category=Category.AUTHENTICATION,
    order=105,
    reorderable=True,
    config=EdgeAuthConfig,
    consumer=EdgeAuthCredential,
    description="The seed's edge tokens: generate makes the route an OAuth 2.0 client "
    "credentials token endpoint issuing HS256 JWTs to apps' client ids; validate requires "
    "such a token (jwt-auth) or the client id as an API key (key-auth); otherwise → 401.",
    runtime=EdgeAuthRuntime,
)
