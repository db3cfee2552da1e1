"""OTLP's ``ExportTraceServiceRequest`` written straight to protobuf's wire format.

Why not the generated classes (``opentelemetry-proto``): building a span's message objects
costs about 55 µs of CPU per span on the event loop (measured with protobuf 7's upb
backend, 9 attributes), which alone would take trace-export below its throughput goal. The
messages used here are few and fixed (opentelemetry-proto 1.x, ``trace/v1/trace.proto``,
``common/v1/common.proto``), so they are written by hand, and what a route's spans share
(name, method, scheme, route, host, client, status...) is encoded once and reused.
Protobuf parsers accept fields in any order; repeated fields (the attributes) keep theirs,
``SpanRecord.attributes``'.
``tests/gateway/plugins/test_trace_export_wire.py`` parses this output with
opentelemetry-proto and compares it with the same request built from its classes.

Field numbers (``<message>.<field> = n``) are the .proto files'.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from portico.gateway.plugins.trace_export.span import SpanRecord

_SPAN_KIND_SERVER = 2
_STATUS_CODE_ERROR = 2
_SAMPLED = 0x01
#: encoded common parts kept for reuse (see _common); past this many the cache starts afresh
_CACHE_LIMIT = 4096
_commons: dict[tuple[str, str, str, str, str, str, int, str | None], bytes] = {}
_fixed64 = struct.Struct("<Q").pack
_fixed32 = struct.Struct("<I").pack


_ONE_BYTE = [bytes((n,)) for n in range(0x80)]


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2): a string, bytes or a message."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _key_value(key: str, value: str | int) -> bytes:
    """A span attribute, framed as ``Span.attributes`` (field 9)."""
    if isinstance(value, int):  # AnyValue.int_value = 3 (int64, two's complement varint)
        any_value = _varint(3 << 3) + _varint(value & 0xFFFFFFFFFFFFFFFF)
    else:  # AnyValue.string_value = 1
        any_value = _field(1, value.encode())
    # KeyValue.key = 1, KeyValue.value = 2
    return _field(9, _field(1, key.encode()) + _field(2, any_value))


_KIND = _varint(6 << 3) + _varint(_SPAN_KIND_SERVER)  # Span.kind = 6
_FLAGS = _varint(16 << 3 | 5) + _fixed32(_SAMPLED)  # Span.flags = 16 (fixed32)
_ERROR = _field(15, _varint(3 << 3) + _varint(_STATUS_CODE_ERROR))  # Span.status.code = 3
_START, _END = _varint(7 << 3 | 1), _varint(8 << 3 | 1)  # fixed64 nanoseconds


def _common(record: SpanRecord) -> bytes:
    """What the spans of one route, client and outcome share: name, kind, status and the
    attributes before ``url.path``; encoded once per distinct combination."""
    key = (
        record.method,
        record.route,
        record.scheme,
        record.host,
        record.client,
        record.version,
        record.status,
        record.agent,
    )
    found = _commons.get(key)
    if found is None:
        parts = [_field(5, record.name.encode()), _KIND, _FLAGS]
        parts += [_key_value(k, v) for k, v in record.common_attributes()]
        if record.error:
            parts.append(_ERROR)
        found = b"".join(parts)
        if len(_commons) >= _CACHE_LIMIT:
            _commons.clear()
        _commons[key] = found
    return found


# the framing of the fixed-size fields: Span.trace_id = 1 (16 bytes), .span_id = 2 and
# .parent_span_id = 4 (8 bytes each)
_TRACE_ID, _SPAN_ID, _PARENT_ID = b"\x0a\x10", b"\x12\x08", b"\x22\x08"
_PATH_KEY = _field(1, b"url.path")  # KeyValue.key


def _span(record: SpanRecord) -> bytes:
    # url.path, the attribute that changes with each span: KeyValue{key, value{string}}
    path = _field(2, _field(1, record.path.encode()))
    parts = [
        _TRACE_ID + record.trace_id.to_bytes(16, "big"),
        _SPAN_ID + record.span_id.to_bytes(8, "big"),
        _START + _fixed64(record.start_ns),
        _END + _fixed64(record.end_ns),
        _common(record),
        _field(9, _PATH_KEY + path),
    ]
    if record.trace_state:
        parts.append(_field(3, record.trace_state.encode()))
    if record.parent_span_id:
        parts.append(_PARENT_ID + record.parent_span_id.to_bytes(8, "big"))
    if record.extra:
        parts += [_key_value(key, value) for key, value in record.extra]
    return b"".join(parts)


def encode(service_name: str, scope: str, records: Sequence[SpanRecord]) -> bytes:
    """The body of an OTLP/HTTP traces request (``application/x-protobuf``): one resource
    (``service.name``), one scope, the spans."""
    # Resource.attributes = 1 (a KeyValue; _key_value frames it as field 9: not reused here)
    service = _field(1, _field(1, b"service.name") + _field(2, _field(1, service_name.encode())))
    scope_spans = _field(1, _field(1, scope.encode()))  # ScopeSpans.scope, its name
    scope_spans += b"".join(_field(2, _span(record)) for record in records)  # .spans = 2
    # ResourceSpans.resource = 1, .scope_spans = 2; the request's resource_spans = 1
    return _field(1, _field(1, service) + _field(2, scope_spans))
