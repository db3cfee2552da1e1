"""Counters that limit traffic: in this process (``local``: fixed windows, leaky buckets) or
shared in Redis by every gateway that uses it (``redis``)."""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)
