"""ai-proxy: forwards chat requests to an LLM provider with the configured credentials.

Its configuration is in ``config``; its per-request work, compiled with the data plane
(``portico.native``), in ``runtime``.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from portico.gateway.plugins.ai_proxy.config import AiProxyConfig
from portico.gateway.plugins.ai_proxy.runtime import AiProxyRuntime
from portico.gateway.plugins.base import Category, PluginSpec

PLUGIN = PluginSpec(
    name="ai-proxy",
    category=Category.AI,
    order=430,
    reorderable=True,
    config=AiProxyConfig,
    description="Forwards chat requests to an LLM provider with the configured credentials; "
    "streams SSE responses.",
    runtime=AiProxyRuntime,
)
