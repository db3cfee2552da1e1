"""trace-export at run time, over real sockets: a gateway on loopback in front of the echo
backend (which shows the ``traceparent`` it received), exporting to a real OTLP/HTTP
receiver (``tests/support/otlpreceiver.py``: protobuf ``ExportTraceServiceRequest`` decoded
with opentelemetry-proto; no OpenTelemetry Collector is installable from the registries)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from portico.gateway.node_options import GatewayOptions
from tests.gateway.plugins.test_observability_runtime import Running, _start, _stop, until_metric
from tests.gateway.test_pipeline import plugin, snapshot
from tests.support.ldapserver import self_signed
from tests.support.otlpreceiver import OtlpReceiver, ReceivedSpan
from tests.support.ports import free_port
from tests.support.waiting import eventually

CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


@pytest.fixture
async def gateway() -> AsyncIterator[Running]:
    running, servers = await _start(GatewayOptions(node_id="node-1", egress_allow=("127.0.0.0/8",)))
    yield running
    await _stop(running, servers)


def trace_export(endpoint: str, **config: Any) -> dict[str, Any]:
    return plugin("trace-export", 910, endpoint=endpoint, **config)


async def spans(receiver: OtlpReceiver, count: int) -> list[ReceivedSpan]:
    await eventually(lambda: len(receiver.spans) >= count, what=f"{count} span(s) exported")
    return receiver.spans


def upstream_traceparent(response: Any) -> list[str]:
    version, trace_id, parent_id, flags = response.json()["headers"]["traceparent"].split("-")
    assert version == "00"
    return [trace_id, parent_id, flags]


async def test_a_request_becomes_a_server_span_and_its_context_goes_upstream(
    gateway: Running, backend: int, receiver: OtlpReceiver
) -> None:
    config = trace_export(
        receiver.endpoint, service_name="shop-gateway", additional_attributes=["$http_x_tenant"]
    )
    await gateway.gw.apply(snapshot(backend, [config]))
    response = await gateway.client.get(
        "/orders/7?page=2",
        headers={
            "traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01",
            "tracestate": "vendor=opaque",
            "user-agent": "tests/1.0",
            "x-tenant": "acme",
        },
    )
    assert response.status_code == 200
    trace_id, parent_id, flags = upstream_traceparent(response)
    assert response.json()["headers"]["tracestate"] == "vendor=opaque"

    [received] = await spans(receiver, 1)
    span = received.span
    assert received.service_name == "shop-gateway"
    assert received.scope == "portico.gateway"
    assert receiver.content_types == ["application/x-protobuf"]
    # the upstream's parent is the gateway's span, in the client's trace
    assert span.trace_id.hex() == trace_id == CLIENT_TRACE
    assert span.span_id.hex() == parent_id
    assert span.parent_span_id.hex() == CLIENT_SPAN
    assert flags == "01"
    assert span.kind == Span.SpanKind.SPAN_KIND_SERVER
    assert span.name == "GET /*"
    assert span.trace_state == "vendor=opaque"
    assert span.end_time_unix_nano >= span.start_time_unix_nano > 0
    assert span.status.code == Status.StatusCode.STATUS_CODE_UNSET
    assert received.attributes == {
        "http.request.method": "GET",
        "url.path": "/orders/7",
        "url.scheme": "http",
        "http.route": "/*",
        "http.response.status_code": 200,
        "server.address": "api.example.com",
        "client.address": "127.0.0.1",
        "user_agent.original": "tests/1.0",
        "network.protocol.version": "1.1",
        "http_x_tenant": "acme",
    }


async def test_without_a_traceparent_the_gateway_starts_the_trace(
    gateway: Running, backend: int, receiver: OtlpReceiver
) -> None:
    await gateway.gw.apply(snapshot(backend, [trace_export(receiver.endpoint)]))
    first = await gateway.client.get("/a")
    second = await gateway.client.get("/b")
    sent = [upstream_traceparent(first), upstream_traceparent(second)]
    exported = await spans(receiver, 2)
    by_span = {s.span.span_id.hex(): s for s in exported}
    assert sent[0][0] != sent[1][0]  # two traces
    for trace_id, span_id, flags in sent:
        assert flags == "01"
        span = by_span[span_id].span
        assert span.trace_id.hex() == trace_id
        assert span.parent_span_id == b""  # a root span
        assert int(trace_id, 16) and int(span_id, 16)


async def test_sampling_zero_exports_nothing_but_still_propagates(
    gateway: Running, backend: int, receiver: OtlpReceiver
) -> None:
    await gateway.gw.apply(snapshot(backend, [trace_export(receiver.endpoint, sample_ratio=0.0)]))
    for _ in range(5):
        trace_id, span_id, flags = upstream_traceparent(await gateway.client.get("/quiet"))
        assert flags == "00"
        assert int(trace_id, 16) and int(span_id, 16)
    # parent-based: a client's sampled trace is traced whatever the ratio...
    sampled = await gateway.client.get(
        "/loud", headers={"traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"}
    )
    assert upstream_traceparent(sampled)[2] == "01"
    [received] = await spans(receiver, 1)
    assert received.span.trace_id.hex() == CLIENT_TRACE
    assert received.attributes["url.path"] == "/loud"


async def test_a_client_that_did_not_sample_is_obeyed(
    gateway: Running, backend: int, receiver: OtlpReceiver
) -> None:
    await gateway.gw.apply(snapshot(backend, [trace_export(receiver.endpoint)]))
    unsampled = await gateway.client.get(
        "/skip", headers={"traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-00"}
    )
    trace_id, span_id, flags = upstream_traceparent(unsampled)
    assert (trace_id, flags) == (CLIENT_TRACE, "00")
    assert span_id != CLIENT_SPAN
    await gateway.client.get("/keep")  # exported after it: the first was not
    [received] = await spans(receiver, 1)
    assert received.attributes["url.path"] == "/keep"


async def test_an_invalid_traceparent_starts_a_new_trace(
    gateway: Running, backend: int, receiver: OtlpReceiver
) -> None:
    await gateway.gw.apply(snapshot(backend, [trace_export(receiver.endpoint)]))
    sent = []
    for bad in (f"00-{'0' * 32}-{CLIENT_SPAN}-01", f"ff-{CLIENT_TRACE}-{CLIENT_SPAN}-01", "junk"):
        response = await gateway.client.get(
            "/x", headers={"traceparent": bad, "tracestate": "vendor=opaque"}
        )
        trace_id, span_id, _ = upstream_traceparent(response)
        assert trace_id not in (CLIENT_TRACE, "0" * 32)
        sent.append((trace_id, span_id))
    exported = await spans(receiver, 3)
    # root spans of new traces: the client's tracestate is not theirs
    assert sorted((s.span.trace_id.hex(), s.span.span_id.hex()) for s in exported) == sorted(sent)
    assert {(s.span.parent_span_id, s.span.trace_state) for s in exported} == {(b"", "")}


async def test_the_upstream_gets_the_gateways_traceparent_whatever_another_plugin_set(
    gateway: Running, backend: int, receiver: OtlpReceiver
) -> None:
    forged = f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"
    rewrite = plugin("proxy-rewrite", 420, headers={"set": {"traceparent": forged}})
    await gateway.gw.apply(snapshot(backend, [rewrite, trace_export(receiver.endpoint)]))
    trace_id, span_id, flags = upstream_traceparent(await gateway.client.get("/rewritten"))
    [received] = await spans(receiver, 1)
    assert (received.span.trace_id.hex(), received.span.span_id.hex()) == (trace_id, span_id)
    assert span_id != CLIENT_SPAN and flags == "01"


async def test_a_5xx_answer_is_an_error_span(gateway: Running, receiver: OtlpReceiver) -> None:
    dead = free_port()  # nothing listens: the gateway answers 502
    await gateway.gw.apply(snapshot(dead, [trace_export(receiver.endpoint)]))
    response = await gateway.client.get("/down")
    assert response.status_code >= 500
    [received] = await spans(receiver, 1)
    assert received.span.status.code == Status.StatusCode.STATUS_CODE_ERROR
    assert received.attributes["http.response.status_code"] == response.status_code


async def test_a_collector_that_is_down_never_fails_requests_and_drops_are_counted(
    gateway: Running, backend: int
) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}/v1/traces"  # nothing listens
    await gateway.gw.apply(snapshot(backend, [trace_export(endpoint)]))
    for _ in range(3):
        assert (await gateway.client.get("/still-served")).status_code == 200
    await until_metric(gateway, "portico_log_entries_dropped_total", {"plugin": "trace-export"}, 3)


async def test_the_collector_is_behind_the_ssrf_guard(backend: int, receiver: OtlpReceiver) -> None:
    running, servers = await _start(GatewayOptions(node_id="node-1"))  # loopback refused
    try:
        await running.gw.apply(snapshot(backend, [trace_export(receiver.endpoint)]))
        assert (await running.client.get("/guarded")).status_code == 200
        labels = {"plugin": "trace-export"}
        await until_metric(running, "portico_log_entries_dropped_total", labels, 1)
        assert receiver.spans == []
    finally:
        await _stop(running, servers)


async def test_a_request_refused_before_the_plugin_ran_is_traced_too(
    gateway: Running, backend: int, receiver: OtlpReceiver
) -> None:
    key_auth = plugin("key-auth", 100, header="apikey", query="apikey", hide_credentials=False)
    await gateway.gw.apply(snapshot(backend, [key_auth, trace_export(receiver.endpoint)]))
    refused = await gateway.client.get(
        "/private", headers={"traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"}
    )
    assert refused.status_code == 401
    [received] = await spans(receiver, 1)
    assert received.span.trace_id.hex() == CLIENT_TRACE
    assert received.span.parent_span_id.hex() == CLIENT_SPAN
    assert received.attributes["http.response.status_code"] == 401
    assert received.span.status.code == Status.StatusCode.STATUS_CODE_UNSET  # a 4xx is not ours


async def test_an_https_collector_gets_the_spans_once_its_certificate_is_verified(
    gateway: Running, backend: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the system's trust store, for this test
    with OtlpReceiver(tls=(cert, key)) as receiver:
        await gateway.gw.apply(snapshot(backend, [trace_export(receiver.endpoint)]))
        trace_id, span_id, _ = upstream_traceparent(await gateway.client.get("/secure"))
        [received] = await spans(receiver, 1)
        assert (received.span.trace_id.hex(), received.span.span_id.hex()) == (trace_id, span_id)


async def test_an_https_collector_whose_certificate_is_not_trusted_gets_nothing(
    gateway: Running, backend: int, tmp_path: Path
) -> None:
    cert, key = self_signed(tmp_path)  # not in the trust store
    with OtlpReceiver(tls=(cert, key)) as receiver:
        await gateway.gw.apply(snapshot(backend, [trace_export(receiver.endpoint)]))
        assert (await gateway.client.get("/untrusted")).status_code == 200
        labels = {"plugin": "trace-export"}
        await until_metric(gateway, "portico_log_entries_dropped_total", labels, 1)
        assert receiver.spans == []
