"""One request as a SERVER span, and batches of spans as OTLP protobuf.

The log phase only gathers strings and numbers (:class:`SpanRecord`); the protobuf messages
are built by :func:`encode`, in the batch processor's task, once per batch. Attribute names
are OpenTelemetry's HTTP semantic conventions (stable since semconv 1.23): ``http.request.
method``, ``url.path``, ``url.scheme``, ``http.route``, ``http.response.status_code``,
``server.address``, ``server.port``, ``client.address``, ``user_agent.original``,
``network.protocol.version``; a 5xx answer sets the span's status to error (for a SERVER
span 4xx is the client's fault, not the span's).
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

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


def _value(value: str | int) -> AnyValue:
    return AnyValue(int_value=value) if isinstance(value, int) else AnyValue(string_value=value)


def _span(record: SpanRecord) -> Span:
    span = Span(
        trace_id=record.trace_id.to_bytes(16, "big"),
        span_id=record.span_id.to_bytes(8, "big"),
        trace_state=record.trace_state,
        name=record.name,
        kind=Span.SpanKind.SPAN_KIND_SERVER,
        start_time_unix_nano=record.start_ns,
        end_time_unix_nano=record.end_ns,
        attributes=[KeyValue(key=k, value=_value(v)) for k, v in record.attributes],
        # W3C flags: sampled (every exported span is)
        flags=0x01,
    )
    if record.parent_span_id:
        span.parent_span_id = record.parent_span_id.to_bytes(8, "big")
    if record.error:
        span.status.CopyFrom(Status(code=Status.StatusCode.STATUS_CODE_ERROR))
    return span


def encode(service_name: str, records: Sequence[SpanRecord]) -> bytes:
    """An OTLP/HTTP traces request body (``application/x-protobuf``)."""
    resource = Resource(
        attributes=[KeyValue(key="service.name", value=AnyValue(string_value=service_name))]
    )
    request = ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=resource,
                scope_spans=[
                    ScopeSpans(
                        scope=InstrumentationScope(name=SCOPE),
                        spans=[_span(record) for record in records],
                    )
                ],
            )
        ]
    )
    body: bytes = request.SerializeToString()
    return body
