"""ai-rate-limiting: a budget of LLM tokens per time window, counted from provider responses.

Its configuration is in ``config``; its per-request work, compiled with the data plane
(``portico.native``), in ``runtime``.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from portico.gateway.plugins.ai_rate_limiting.config import AiRateLimitingConfig
from portico.gateway.plugins.ai_rate_limiting.runtime import AiRateLimitingRuntime
from portico.gateway.plugins.base import Category, PluginSpec

PLUGIN = PluginSpec(
    name="ai-rate-limiting",
    category=Category.AI,
    order=220,
    reorderable=True,
    config=AiRateLimitingConfig,
    description="Limits LLM tokens per time window, counted from the providers' usage reports.",
    runtime=AiRateLimitingRuntime,
)
