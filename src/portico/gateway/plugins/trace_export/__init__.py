"""trace-export: OpenTelemetry spans sent over OTLP/HTTP; ``traceparent`` propagated upstream.

Per request: the access phase reads the W3C ``traceparent`` (``propagation``), or starts a
trace, decides whether it is sampled (parent-based: an incoming sampled flag is obeyed;
otherwise ``sample_ratio`` of new traces, by trace id), and sends the upstream a
``traceparent`` whose parent is the gateway's span (``tracestate`` travels on untouched).
The log phase writes the request as one SERVER span with OpenTelemetry's HTTP semantic
conventions, in protobuf (``wire.span``), and queues it — memory only. The gateway's shared
batch processor (``telemetry/batch.py``, as the loggers use it) POSTs batches to ``endpoint``
as one OTLP ``ExportTraceServiceRequest`` each, off the request path, through the SSRF guard;
a collector that is down never touches a request: its spans are dropped and counted
(``portico_log_entries_dropped_total{plugin="trace-export"}``).

Its configuration is in ``config``; the rest, which every request and every span pays for,
is compiled with the data plane (``portico.native``): ``runtime`` and ``propagation`` with
mypyc, ``wire`` (the bytes written: traceparents and protobuf) in C, ``wire.py`` being its
reference.
"""

from portico import native

# the compiled build first, when current: see CONVENTIONS.md "Compiled modules"
__path__ = native.package_path(__name__, __path__)

from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.plugins.trace_export.config import TraceExportConfig
from portico.gateway.plugins.trace_export.runtime import TraceExportRuntime

PLUGIN = PluginSpec(
    name="trace-export",
    category=Category.OBSERVABILITY,
    order=910,
    reorderable=False,
    config=TraceExportConfig,
    description="Exports OpenTelemetry spans over OTLP/HTTP and propagates traceparent upstream.",
    runtime=TraceExportRuntime,
)
