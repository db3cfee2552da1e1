"""trace-export writes OTLP protobuf by hand (``trace_export/wire.py``, for speed): its bytes
must be exactly what opentelemetry-proto's generated classes make of the same spans."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from portico.gateway.plugins.trace_export import wire
from portico.gateway.plugins.trace_export.span import SpanRecord


def reference(service_name: str, scope: str, records: Sequence[SpanRecord]) -> bytes:
    def value(found: str | int) -> AnyValue:
        if isinstance(found, int):
            return AnyValue(int_value=found)
        return AnyValue(string_value=found)

    def span(record: SpanRecord) -> Span:
        built = Span(
            trace_id=record.trace_id.to_bytes(16, "big"),
            span_id=record.span_id.to_bytes(8, "big"),
            trace_state=record.trace_state,
            name=record.name,
            kind=Span.SpanKind.SPAN_KIND_SERVER,
            start_time_unix_nano=record.start_ns,
            end_time_unix_nano=record.end_ns,
            attributes=[KeyValue(key=k, value=value(v)) for k, v in record.attributes()],
            flags=0x01,
        )
        if record.parent_span_id:
            built.parent_span_id = record.parent_span_id.to_bytes(8, "big")
        if record.error:
            built.status.CopyFrom(Status(code=Status.StatusCode.STATUS_CODE_ERROR))
        return built

    service = KeyValue(key="service.name", value=AnyValue(string_value=service_name))
    request = ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=[service]),
                scope_spans=[
                    ScopeSpans(
                        scope=InstrumentationScope(name=scope),
                        spans=[span(record) for record in records],
                    )
                ],
            )
        ]
    )
    encoded: bytes = request.SerializeToString()
    return encoded


text = st.text(max_size=40)
attribute = st.tuples(
    st.text(min_size=1, max_size=40), st.one_of(text, st.integers(-(2**63), 2**63 - 1))
)
records = st.builds(
    SpanRecord,
    trace_id=st.integers(1, 2**128 - 1),
    span_id=st.integers(1, 2**64 - 1),
    parent_span_id=st.integers(0, 2**64 - 1),
    trace_state=text,
    start_ns=st.integers(0, 2**64 - 1),
    end_ns=st.integers(0, 2**64 - 1),
    method=st.one_of(st.sampled_from(["GET", "POST", "PURGE"]), text),
    path=text,
    scheme=st.sampled_from(["http", "https"]),
    route=text,
    host=text,
    client=text,
    version=st.sampled_from(["1.0", "1.1"]),
    status=st.integers(0, 599),
    agent=st.one_of(st.none(), text),
    extra=st.one_of(st.none(), st.lists(attribute, max_size=6)),
)


@settings(max_examples=60, deadline=None)
@given(service=text, spans=st.lists(records, max_size=6))
def test_the_hand_written_encoding_is_opentelemetry_protos(
    service: str, spans: list[SpanRecord]
) -> None:
    ours = wire.encode(service, "portico.gateway", spans)
    theirs = reference(service, "portico.gateway", spans)
    # the same message, field for field (the bytes may differ: protobuf leaves out empty
    # strings and zeros, which the hand-written encoding keeps, and parsing reads both alike)
    assert ExportTraceServiceRequest.FromString(ours) == ExportTraceServiceRequest.FromString(
        theirs
    )
