"""Choosing the node of an upstream a request goes to: the balancer (``balancer``), its
algorithms (``algorithms``), the ``chash`` key (``hash_key``) and the node types they and the
health checker share (``nodes``)."""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)
