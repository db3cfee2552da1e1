"""ai-prompt-guard: allow/deny regular expressions over the messages of a chat request → 400.

Its configuration is in ``config``; its per-request work, compiled with the data plane
(``portico.native``), in ``runtime``.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from portico.gateway.plugins.ai_prompt_guard.config import AiPromptGuardConfig
from portico.gateway.plugins.ai_prompt_guard.runtime import AiPromptGuardRuntime
from portico.gateway.plugins.base import Category, PluginSpec

PLUGIN = PluginSpec(
    name="ai-prompt-guard",
    category=Category.AI,
    order=400,
    reorderable=True,
    config=AiPromptGuardConfig,
    description="Refuses (400) chat requests whose messages match a deny pattern or no "
    "allow pattern.",
    runtime=AiPromptGuardRuntime,
)
