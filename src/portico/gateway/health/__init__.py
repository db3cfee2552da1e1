"""Health of an upstream's nodes: the checker (``checker``), the checks' settings
(``config``), active probes (``probe``) and the counting rules (``state``)."""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)
