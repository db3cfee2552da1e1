"""key-auth: the consumer is the holder of an API key sent in a header (or query argument).

Its configuration is in ``config``; its per-request work, compiled with the data plane
(``portico.native``), in ``runtime``.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.plugins.key_auth.config import KeyAuthConfig, KeyAuthCredential
from portico.gateway.plugins.key_auth.runtime import KeyAuthRuntime

PLUGIN = PluginSpec(
    name="key-auth",
    category=Category.AUTHENTICATION,
    order=100,
    reorderable=True,
    config=KeyAuthConfig,
    consumer=KeyAuthCredential,
    description="Authenticates consumers by an API key; missing → 401 'Missing API key in "
    "request', unknown → 401 'Invalid API key in request'.",
    runtime=KeyAuthRuntime,
)
