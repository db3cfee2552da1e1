"""ai-prompt-template: named chat templates; a request names one and fills its ``{{vars}}``.

Its configuration is in ``config``; its per-request work, compiled with the data plane
(``portico.native``), in ``runtime``.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from portico.gateway.plugins.ai_prompt_template.config import AiPromptTemplateConfig
from portico.gateway.plugins.ai_prompt_template.runtime import AiPromptTemplateRuntime
from portico.gateway.plugins.base import Category, PluginSpec

PLUGIN = PluginSpec(
    name="ai-prompt-template",
    category=Category.AI,
    order=410,
    reorderable=True,
    config=AiPromptTemplateConfig,
    description="Builds the chat request from a named template filled with the request's "
    "variables.",
    runtime=AiPromptTemplateRuntime,
)
