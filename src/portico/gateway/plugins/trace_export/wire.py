"""What trace-export writes, byte for byte: W3C ``traceparent`` values and OTLP protobuf.

The reference implementation. ``wire.c`` is the same module in C (the same functions, the same
results: ``tests/gateway/plugins/test_trace_export_wire.py`` feeds both generated input and
requires the same bytes), compiled with the gateway's hot modules (``scripts/build_native.py``)
and found first while that build is current (``portico.native``); this file runs otherwise.
Why C: a span made as an object at request time and encoded later from compiled Python cost
~15,000 instructions a request (callgrind: its attribute list, ~20 small ``bytes`` joined,
a cache of the parts a route's spans share), most of trace-export's cost on the gateway; the
work itself, ~300 bytes written from a dozen strings, is a few hundred.

A request's span is written once, in its log phase (:func:`span`), as the bytes it has in the
export request; a batch is those bytes framed once (:func:`export_request`). Nothing keeps
state: each call reads its arguments and returns a new object.

The messages (opentelemetry-proto 1.x, ``trace/v1/trace.proto``, ``common/v1/common.proto``,
``collector/trace/v1/trace_service.proto``; ``<message>.<field> = n`` below are the .proto
files' numbers) are few and fixed: written by hand rather than through the generated classes
(building a span's message objects cost ~55 µs of CPU). Protobuf parsers accept fields in any
order; the repeated ones (the attributes) keep theirs. Empty strings are written as given
(protobuf leaves them out; a parser reads both alike).

Attribute names are OpenTelemetry's HTTP semantic conventions (stable since semconv 1.23), in
this order: ``http.request.method``, ``url.scheme``, ``http.route``, ``server.address``,
``client.address``, ``network.protocol.version``, ``http.response.status_code`` (when an
answer was sent), ``user_agent.original`` (when the client sent one),
``http.request.method_original`` (a method semconv does not name, reported as ``_OTHER``),
``url.path``, then the ``additional_attributes``. The span is named ``{method} {http.route}``
(``HTTP {http.route}`` for an unknown method); a 5xx answer sets its status to error (for a
SERVER span a 4xx is the client's fault, not the span's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

#: a traceparent this module writes or reads: version 00, lower-case hex ids, the flags
_TRACEPARENT: Final = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_SPAN_ID: Final = re.compile(r"[0-9a-f]{16}")
#: methods semconv names as they are; any other is reported as "_OTHER"
KNOWN_METHODS: Final = frozenset(
    {"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}
)
_MASK_64: Final = (1 << 64) - 1

Attribute = tuple[str, str | int]


# ------------------------------------------------------------------ W3C trace context


def traceparents(randomness: bytes, bound: int) -> list[str]:
    """The ``traceparent`` values of new traces, one for each 24 bytes of ``randomness`` (a
    trace id of 16, a span id of 8): ``00-<trace id>-<span id>-<flags>``, sampled (flags
    ``01``) when the trace id's low 64 bits are below ``bound`` (OpenTelemetry's
    TraceIdRatioBased: ``round(ratio * 2**64)``, from 0, none, to 2**64, all; the same trace
    gets the same decision on every node), ``00`` otherwise. An all-zero id is invalid: its
    last bit is set (one draw in 2**64, for a span id)."""
    if not isinstance(randomness, bytes):
        raise TypeError("randomness must be bytes")
    if not isinstance(bound, int):
        raise TypeError("bound must be an int")
    if len(randomness) % 24:
        raise ValueError("randomness comes 24 bytes to a traceparent")
    if not 0 <= bound <= 1 << 64:
        raise ValueError("bound must be from 0 to 2**64")
    found = []
    for at in range(0, len(randomness), 24):
        trace = bytearray(randomness[at : at + 16])
        span = bytearray(randomness[at + 16 : at + 24])
        if not any(trace):
            trace[15] = 1
        if not any(span):
            span[7] = 1
        sampled = int.from_bytes(trace[8:], "big") < bound
        found.append(f"00-{trace.hex()}-{span.hex()}-{'01' if sampled else '00'}")
    return found


# ------------------------------------------------------------------ protobuf


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2): a string, bytes or a message."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str")
    return value


def _u64(value: object, what: str) -> int:
    if not isinstance(value, int):
        raise TypeError(f"{what} must be an int")
    if not 0 <= value <= _MASK_64:
        raise OverflowError(f"{what} must be from 0 to 2**64 - 1")
    return value


def _attribute(key: str, value: str | int) -> bytes:
    """``Span.attributes`` (9): a KeyValue (key = 1, value = 2: an AnyValue whose
    string_value = 1, or int_value = 3, int64 as two's complement)."""
    if isinstance(value, int):
        any_value = _varint(3 << 3) + _varint(value & _MASK_64)
    else:
        any_value = _field(1, value.encode())
    return _field(9, _field(1, key.encode()) + _field(2, any_value))


def span(
    traceparent: str,
    parent_span_id: str,
    trace_state: str,
    start_ns: int,
    end_ns: int,
    method: str,
    path: str,
    scheme: str,
    route: str,
    host: str,
    client: str,
    version: str,
    status: int,
    agent: str | None,
    extra: Sequence[Attribute] | None,
) -> bytes:
    """One request as a SERVER span, framed as ``ScopeSpans.spans`` (2): its trace and span
    ids are ``traceparent``'s (as :func:`traceparents` writes it, or the gateway for a
    client's trace), ``parent_span_id`` 16 hex digits or "" (a root span); ``status`` 0
    when no answer was sent; ``extra``: the additional attributes. A bad argument is a
    TypeError (its type), ValueError (an id's form) or OverflowError (a time), checked in
    the order of the arguments; a string that is not valid Unicode, UnicodeEncodeError."""
    found = _TRACEPARENT.fullmatch(_str(traceparent, "traceparent"))
    if found is None:
        raise ValueError("not a traceparent: 00-<32 hex>-<16 hex>-<2 hex>, lower-case")
    if _str(parent_span_id, "parent_span_id") and not _SPAN_ID.fullmatch(parent_span_id):
        raise ValueError("parent_span_id must be 16 lower-case hex digits or empty")
    _str(trace_state, "trace_state")
    _u64(start_ns, "start_ns")
    _u64(end_ns, "end_ns")
    for value, what in (
        (method, "method"),
        (path, "path"),
        (scheme, "scheme"),
        (route, "route"),
        (host, "host"),
        (client, "client"),
        (version, "version"),
    ):
        _str(value, what)
    if not isinstance(status, int):
        raise TypeError("status must be an int")
    if agent is not None:
        _str(agent, "agent")
    if extra is not None and not isinstance(extra, (list, tuple)):
        raise TypeError("extra must be a list of (key, value) or None")
    for item in extra or ():
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError("extra must hold (key, value) tuples")
        _str(item[0], "an attribute's key")
        if not isinstance(item[1], (str, int)):
            raise TypeError("an attribute's value must be a str or an int")

    known = method in KNOWN_METHODS
    parts = [
        _field(1, bytes.fromhex(found.group(1))),  # Span.trace_id
        _field(2, bytes.fromhex(found.group(2))),  # .span_id
    ]
    if trace_state:
        parts.append(_field(3, trace_state.encode()))
    if parent_span_id:
        parts.append(_field(4, bytes.fromhex(parent_span_id)))
    parts.append(_field(5, f"{method if known else 'HTTP'} {route}".encode()))  # .name
    parts.append(_varint(6 << 3) + _varint(2))  # .kind = SPAN_KIND_SERVER
    parts.append(_varint(7 << 3 | 1) + start_ns.to_bytes(8, "little"))  # .start_time (fixed64)
    parts.append(_varint(8 << 3 | 1) + end_ns.to_bytes(8, "little"))  # .end_time
    parts.append(_attribute("http.request.method", method if known else "_OTHER"))
    parts.append(_attribute("url.scheme", scheme))
    parts.append(_attribute("http.route", route))
    parts.append(_attribute("server.address", host))
    parts.append(_attribute("client.address", client))
    parts.append(_attribute("network.protocol.version", version))
    if status:
        parts.append(_attribute("http.response.status_code", status))
    if agent is not None:
        parts.append(_attribute("user_agent.original", agent))
    if not known:
        parts.append(_attribute("http.request.method_original", method))
    parts.append(_attribute("url.path", path))
    parts += [_attribute(key, value) for key, value in extra or ()]
    if status >= 500:
        parts.append(_field(15, _varint(3 << 3) + _varint(2)))  # .status.code = ERROR
    parts.append(_varint(16 << 3 | 5) + (1).to_bytes(4, "little"))  # .flags (fixed32): sampled
    return _field(2, b"".join(parts))


def export_request(service_name: str, scope: str, spans: Sequence[bytes]) -> bytes:
    """The body of an OTLP/HTTP traces request (``application/x-protobuf``): one resource
    (``service.name``), one scope, the spans as :func:`span` wrote them."""
    _str(service_name, "service_name")
    _str(scope, "scope")
    if not isinstance(spans, (list, tuple)) or not all(isinstance(s, bytes) for s in spans):
        raise TypeError("spans must be a list of bytes")
    # Resource.attributes = 1: a KeyValue (key = 1, value = 2 {string_value = 1})
    name = _field(2, _field(1, service_name.encode()))
    service = _field(1, _field(1, b"service.name") + name)
    # ScopeSpans.scope = 1 (InstrumentationScope.name = 1), then the spans (2, framed)
    scope_spans = _field(1, _field(1, scope.encode())) + b"".join(spans)
    # ExportTraceServiceRequest.resource_spans = 1: ResourceSpans.resource = 1,
    # .scope_spans = 2
    return _field(1, _field(1, service) + _field(2, scope_spans))
