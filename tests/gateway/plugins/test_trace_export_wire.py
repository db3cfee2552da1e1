"""trace-export writes W3C traceparents and OTLP protobuf by hand (``trace_export/wire.py``,
and the same module in C, ``wire.c``, for speed): the C module must write the same bytes as
the reference for the same input and refuse the same bad arguments alike, and what both write
must be what opentelemetry-proto's generated classes make of the same spans.

The C module is the one of the current native build (``make native``); where there is none
(a checkout never built), the comparisons with it are skipped, the reference's own checks
still run.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from portico import native
from portico.gateway.plugins.trace_export import wire as loaded
from tests.support.c_modules import implementations

MODULE = "portico.gateway.plugins.trace_export.wire"
KNOWN = {"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}


REFERENCE, C, IMPLEMENTATIONS = implementations(MODULE)

HEX = "0123456789abcdef"
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", "é", "😀", "x" * 200]  # (200: a length whose varint takes two bytes)
)
INT64 = st.integers(-(2**63), 2**63 - 1)
SPANS = st.fixed_dictionaries(
    {
        "traceparent": st.builds(
            lambda t, s, f: f"00-{t}-{s}-{f}",
            st.text(HEX, min_size=32, max_size=32),
            st.text(HEX, min_size=16, max_size=16),
            st.sampled_from(["01", "00", "03"]),
        ),
        "parent_span_id": st.just("") | st.text(HEX, min_size=16, max_size=16),
        "trace_state": TEXT,
        "start_ns": st.integers(0, 2**64 - 1),
        "end_ns": st.integers(0, 2**64 - 1),
        "method": st.sampled_from(sorted(KNOWN)) | st.sampled_from(["PURGE", "get", ""]) | TEXT,
        "path": TEXT,
        "scheme": st.sampled_from(["http", "https"]),
        "route": TEXT,
        "host": TEXT,
        "client": TEXT,
        "version": st.sampled_from(["1.0", "1.1"]),
        "status": st.integers(0, 599) | INT64,
        "agent": st.none() | TEXT,
        "extra": st.none()
        | st.lists(st.tuples(st.text(min_size=1, max_size=40), TEXT | INT64), max_size=6)
        | st.lists(st.tuples(st.just("k"), st.just("v")), min_size=50, max_size=60),
    }
)


#: wire.span's arguments, in order
ARGUMENTS = (
    "traceparent",
    "parent_span_id",
    "trace_state",
    "start_ns",
    "end_ns",
    "method",
    "path",
    "scheme",
    "route",
    "host",
    "client",
    "version",
    "status",
    "agent",
    "extra",
)


def arguments(fields: dict[str, Any]) -> list[Any]:
    return [fields[name] for name in ARGUMENTS]


def expected_span(fields: dict[str, Any]) -> Span:
    """The span opentelemetry-proto's classes make of the same request (see wire.py's
    docstring for the attributes and their order)."""
    method = fields["method"]
    known = method in KNOWN
    attributes: list[tuple[str, str | int]] = [
        ("http.request.method", method if known else "_OTHER"),
        ("url.scheme", fields["scheme"]),
        ("http.route", fields["route"]),
        ("server.address", fields["host"]),
        ("client.address", fields["client"]),
        ("network.protocol.version", fields["version"]),
    ]
    if fields["status"]:
        attributes.append(("http.response.status_code", fields["status"]))
    if fields["agent"] is not None:
        attributes.append(("user_agent.original", fields["agent"]))
    if not known:
        attributes.append(("http.request.method_original", method))
    attributes.append(("url.path", fields["path"]))
    attributes += fields["extra"] or []

    def value(found: str | int) -> AnyValue:
        if isinstance(found, int):
            return AnyValue(int_value=found)
        return AnyValue(string_value=found)

    _, trace_id, span_id, _ = fields["traceparent"].split("-")
    span = Span(
        trace_id=bytes.fromhex(trace_id),
        span_id=bytes.fromhex(span_id),
        trace_state=fields["trace_state"],
        name=f"{method if known else 'HTTP'} {fields['route']}",
        kind=Span.SpanKind.SPAN_KIND_SERVER,
        start_time_unix_nano=fields["start_ns"],
        end_time_unix_nano=fields["end_ns"],
        attributes=[KeyValue(key=k, value=value(v)) for k, v in attributes],
        flags=0x01,
    )
    if fields["parent_span_id"]:
        span.parent_span_id = bytes.fromhex(fields["parent_span_id"])
    if fields["status"] >= 500:
        span.status.CopyFrom(Status(code=Status.StatusCode.STATUS_CODE_ERROR))
    return span


def expected_request(service: str, scope: str, spans: list[Span]) -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(
                    attributes=[KeyValue(key="service.name", value=AnyValue(string_value=service))]
                ),
                scope_spans=[ScopeSpans(scope=InstrumentationScope(name=scope), spans=spans)],
            )
        ]
    )


@settings(max_examples=150, deadline=None)
@given(service=TEXT, scope=TEXT, spans=st.lists(SPANS, max_size=5))
def test_spans_and_their_request_are_opentelemetry_protos(
    service: str, scope: str, spans: list[dict[str, Any]]
) -> None:
    written = [REFERENCE.span(*arguments(fields)) for fields in spans]
    body = REFERENCE.export_request(service, scope, written)
    # the same message, field for field (the bytes may differ from the generated classes':
    # they leave out empty strings, which the hand-written encoding keeps; parsers read both)
    expected = expected_request(service, scope, [expected_span(fields) for fields in spans])
    assert ExportTraceServiceRequest.FromString(body) == expected
    if C is not None:
        assert [C.span(*arguments(fields)) for fields in spans] == written
        assert C.export_request(service, scope, written) == body
        assert C.export_request(service, scope, tuple(written)) == body


@settings(max_examples=150, deadline=None)
@given(
    randomness=st.integers(0, 40).flatmap(lambda n: st.binary(min_size=24 * n, max_size=24 * n)),
    bound=st.integers(0, 2**64) | st.sampled_from([0, 1, 2**63, 2**64 - 1, 2**64]),
    zeros=st.booleans(),
)
def test_traceparents_are_the_randomness_as_w3c_headers(
    randomness: bytes, bound: int, zeros: bool
) -> None:
    if zeros and randomness:  # all-zero ids, which are invalid: their last bit is set
        randomness = bytes(24) + randomness[24:]
    made = REFERENCE.traceparents(randomness, bound)
    assert len(made) == len(randomness) // 24
    for at, header in enumerate(made):
        version, trace_id, span_id, flags = header.split("-")
        trace, span = randomness[24 * at : 24 * at + 16], randomness[24 * at + 16 : 24 * at + 24]
        if any(trace):
            assert trace_id == trace.hex()
        else:
            assert trace_id == "0" * 31 + "1"
        assert span_id == (span.hex() if any(span) else "0" * 15 + "1")
        sampled = int(trace_id, 16) & (2**64 - 1) < bound
        assert (version, flags) == ("00", "01" if sampled else "00")
    if C is not None:
        assert C.traceparents(randomness, bound) == made


#: mostly hex digits, and the characters either side of their ranges (the C module reads the
#: ids eight digits at a time: each byte's checks must stay in it)
NEAR_HEX = st.sampled_from([*"0123456789abcdef" * 3, *"/:`@gAF\x00\x7f\x80\xffé😀"])


@pytest.mark.skipif(C is None, reason="no current native build")
@settings(max_examples=300, deadline=None)
@given(
    trace=st.text(NEAR_HEX, min_size=32, max_size=32),
    span=st.text(NEAR_HEX, min_size=16, max_size=16),
    flags=st.text(NEAR_HEX, min_size=2, max_size=2),
    parent=st.just("") | st.text(NEAR_HEX, min_size=16, max_size=16),
)
def test_ids_valid_or_not_are_read_alike(trace: str, span: str, flags: str, parent: str) -> None:
    assert C is not None
    fields = {**GOOD, "traceparent": f"00-{trace}-{span}-{flags}", "parent_span_id": parent}

    def outcome(module: ModuleType) -> bytes | type[Exception]:
        try:
            written: bytes = module.span(*arguments(fields))
        except (TypeError, ValueError) as error:
            return type(error)
        return written

    assert outcome(C) == outcome(REFERENCE)


def test_the_ratio_bound_samples_none_and_all() -> None:
    randomness = b"\xff" * 24 + bytes(24)
    assert [h[-2:] for h in REFERENCE.traceparents(randomness, 0)] == ["00", "00"]
    assert [h[-2:] for h in REFERENCE.traceparents(randomness, 2**64)] == ["01", "01"]
    assert [h[-2:] for h in REFERENCE.traceparents(randomness, 2**64 - 1)] == ["00", "01"]


GOOD: dict[str, Any] = {
    "traceparent": f"00-{'ab' * 16}-{'cd' * 8}-01",
    "parent_span_id": "",
    "trace_state": "",
    "start_ns": 1,
    "end_ns": 2,
    "method": "GET",
    "path": "/",
    "scheme": "http",
    "route": "/*",
    "host": "h",
    "client": "c",
    "version": "1.1",
    "status": 200,
    "agent": None,
    "extra": None,
}
BAD_SPANS = [
    ("traceparent", 1, TypeError),
    ("traceparent", f"00-{'AB' * 16}-{'cd' * 8}-01", ValueError),
    ("traceparent", f"01-{'ab' * 16}-{'cd' * 8}-01", ValueError),
    ("traceparent", f"00-{'ab' * 16}-{'cd' * 8}-01 ", ValueError),
    ("traceparent", f"00-{'ab' * 16}-{'cd' * 8}-0é", ValueError),
    ("traceparent", f"00-{'ab' * 16}-{'cd' * 8}-0😀", ValueError),
    ("parent_span_id", None, TypeError),
    ("parent_span_id", "abc", ValueError),
    ("parent_span_id", "g" * 16, ValueError),
    ("trace_state", b"x", TypeError),
    ("start_ns", -1, OverflowError),
    ("end_ns", 2**64, OverflowError),
    ("end_ns", 1.5, TypeError),
    ("method", None, TypeError),
    ("version", 1.1, TypeError),
    ("status", "200", TypeError),
    ("agent", b"curl", TypeError),
    ("extra", {"k": "v"}, TypeError),
    ("extra", [("k",)], TypeError),
    ("extra", [["k", "v"]], TypeError),
    ("extra", [(1, "v")], TypeError),
    ("extra", [("k", 1.5)], TypeError),
    ("path", "\ud800", UnicodeEncodeError),
    ("agent", "\udfff", UnicodeEncodeError),
    ("extra", [("k", "\ud800")], UnicodeEncodeError),
]


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
@pytest.mark.parametrize(("field", "value", "error"), BAD_SPANS)
def test_a_bad_argument_is_refused_alike(
    module: ModuleType, field: str, value: object, error: type[Exception]
) -> None:
    assert module.span(*arguments(GOOD))  # the rest is good
    with pytest.raises(error):
        module.span(*arguments({**GOOD, field: value}))


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_bad_batches_and_randomness_are_refused_alike(module: ModuleType) -> None:
    with pytest.raises(TypeError):
        module.export_request(1, "scope", [])
    with pytest.raises(TypeError):
        module.export_request("svc", "scope", [b"", "x"])
    with pytest.raises(TypeError):
        module.export_request("svc", "scope", b"")
    with pytest.raises(UnicodeEncodeError):
        module.export_request("\ud800", "scope", [])
    with pytest.raises(TypeError):
        module.traceparents(bytearray(24), 1)
    with pytest.raises(TypeError):
        module.traceparents(bytes(24), 0.5)
    with pytest.raises(ValueError, match="24 bytes"):
        module.traceparents(bytes(25), 1)
    for bound in (-1, 2**64 + 1):
        with pytest.raises(ValueError, match="bound"):
            module.traceparents(bytes(24), bound)
    assert module.traceparents(b"", 0) == []


def test_the_c_module_is_the_one_the_gateway_uses_when_built() -> None:
    if not native.active():
        pytest.skip("the interpreted modules run (PORTICO_NATIVE=0 or no current build)")
    assert native.compiled(loaded)
