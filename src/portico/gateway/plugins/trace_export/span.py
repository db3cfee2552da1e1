"""One request as a SERVER span: what the log phase keeps of it.

The log phase only gathers strings and numbers (:class:`SpanRecord`); the protobuf bytes are
written by ``wire.encode``, in the batch processor's task, once per batch. Attribute names
are OpenTelemetry's HTTP semantic conventions (stable since semconv 1.23): ``http.request.
method``, ``url.path``, ``url.scheme``, ``http.route``, ``http.response.status_code``,
``server.address``, ``server.port``, ``client.address``, ``user_agent.original``,
``network.protocol.version``; a 5xx answer sets the span's status to error (for a SERVER
span 4xx is the client's fault, not the span's).
"""

from __future__ import annotations

#: the instrumentation scope of the gateway's spans
SCOPE = "portico.gateway"
#: methods semconv names as they are; any other is reported as "_OTHER" (its value bounded)
KNOWN_METHODS = frozenset(
    {"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}
)

Attribute = tuple[str, str | int]


class SpanRecord:
    """What the log phase keeps of a request (a plain class: one per sampled request)."""

    __slots__ = (
        "attributes",
        "end_ns",
        "error",
        "name",
        "parent_span_id",
        "span_id",
        "start_ns",
        "trace_id",
        "trace_state",
    )

    def __init__(
        self,
        trace_id: int,
        span_id: int,
        parent_span_id: int,
        trace_state: str,
        name: str,
        start_ns: int,
        end_ns: int,
        attributes: list[Attribute],
        error: bool,
    ) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_span_id = parent_span_id  # 0: a root span
        self.trace_state = trace_state
        self.name = name
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.attributes = attributes
        self.error = error
