"""Gateway plugins: one module per plugin (see ``base`` for the contract) and the registry.

The hottest plugins keep their per-request work in a ``*_runtime`` module compiled with the
data plane (``portico.native``); their pydantic models stay in the plugin's own module.
"""

from portico import native

# the compiled build of the hot modules, when there is a current one (portico/native.py)
__path__ = native.package_path(__name__, __path__)
