"""What the gateway tells about the traffic it serves: per-minute rollups shipped to the control
plane (``rollups``), Prometheus metrics (``metrics``), the loggers' batch processor
(``batch``) and their log entries (``log_entry``)."""

from portico import native

# the compiled build of the hot modules, when there is a current one (portico/native.py)
__path__ = native.package_path(__name__, __path__)
