"""Gateway plugins: one module per plugin, or one package for a plugin of several modules
(see ``base`` for the contract), and the registry.

The hottest plugins (key-auth, limit-count, product-quota, ai-prompt-guard, ai-proxy) are
packages: their per-request work is in a ``runtime`` module compiled with the data plane
(``portico.native``), their pydantic models in ``config``, and the package's ``__init__``
exports ``PLUGIN``. ``_ai_chat``, the chat body the AI plugins share, is compiled too.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)
