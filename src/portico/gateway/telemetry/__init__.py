"""What the gateway tells about the traffic it serves: per-minute rollups shipped to the control
plane (``rollups``), Prometheus metrics (``metrics``), the loggers' batch processor
(``batch``) and their log entries (``log_entry``)."""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)
