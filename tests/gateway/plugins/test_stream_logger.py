"""stream-logger at run time: real requests through a Gateway on loopback, their entries read
back from the Kafka broker they were produced to.

Kafka is not installable from the registries this project uses, so the broker is
``tests.support.kafkabroker.KafkaBroker``: a single-node broker speaking the real Kafka wire
protocol (ApiVersions, Metadata, Produce; the bytes encoded and decoded with aiokafka's own
protocol and record classes), which keeps the messages it was sent for the test to read.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from portico.gateway.egress import EgressGuard
from portico.gateway.node_options import GatewayOptions
from portico.gateway.plugins.stream_logger import KafkaSink, StreamLoggerConfig
from portico.gateway.telemetry import jsonline
from portico.gateway.telemetry.batch import BatchFailed
from portico.gateway.telemetry.log_entry import EntryBatch
from tests.gateway.plugins.test_logger_sinks import DROPPED, assert_entry, call_as_alice
from tests.gateway.plugins.test_observability_runtime import (
    Running,
    _start,
    _stop,
    environment,
    key_auth,
    until_metric,
)
from tests.gateway.test_pipeline import plugin
from tests.support.kafkabroker import KafkaBroker
from tests.support.waiting import eventually

TOPIC = "portico-access"
TOPIC_AUTHORIZATION_FAILED = 29  # a Kafka error the producer does not retry by itself


@pytest.fixture
async def gateway() -> AsyncIterator[Running]:
    running, servers = await _start(GatewayOptions(node_id="node-1", egress_allow=("127.0.0.0/8",)))
    yield running
    await _stop(running, servers)


@pytest.fixture
async def guarded_gateway() -> AsyncIterator[Running]:
    running, servers = await _start(GatewayOptions(node_id="node-1"))
    yield running
    await _stop(running, servers)


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaBroker]:
    with KafkaBroker() as broker:
        yield broker


@pytest.fixture(autouse=True)
def _fresh_broker(kafka: KafkaBroker) -> None:
    kafka.reset()


def stream_logger(port: int, **config: Any) -> dict[str, Any]:
    base = {
        "broker_list": {"127.0.0.1": port},
        "stream_topic": TOPIC,
        "producer_type": "sync",
        "timeout": 2,
        "batch_max_size": 1,
        "inactive_timeout": 1,
        "max_retry_count": 0,
        "retry_delay": 0,
    }
    return plugin("stream-logger", 951, **{**base, **config})


async def test_each_entry_is_a_message_on_the_topic(
    gateway: Running, backend: int, kafka: KafkaBroker
) -> None:
    logger = stream_logger(kafka.port, key="access", required_acks=-1, batch_max_size=2)
    await gateway.gw.apply(environment(backend, [key_auth(), logger], with_alice=True))
    ids = [await call_as_alice(gateway, f"/orders/{n}") for n in range(2)]
    await eventually(lambda: len(kafka.topic_messages(TOPIC)) == 2)
    messages = kafka.topic_messages(TOPIC)
    assert [m.offset for m in messages] == [0, 1]
    assert {m.key for m in messages} == {b"access"}
    for n, (message, request_id) in enumerate(zip(messages, ids, strict=True)):
        assert message.value is not None
        assert_entry(json.loads(message.value), request_id, f"/orders/{n}")
    assert set(kafka.acks) == {-1}  # required_acks: -1 asks every in-sync replica


async def test_a_sync_batch_is_sent_once_the_broker_acknowledged_it(kafka: KafkaBroker) -> None:
    """The sink itself: a batch sent (one Produce request, ``ProduceFrame``) returns once the
    broker's answer was read and said the batch was taken; a refusal is a failed send."""
    config = StreamLoggerConfig(
        broker_list={"127.0.0.1": kafka.port}, stream_topic=TOPIC, producer_type="sync"
    )
    dropped: list[int] = []
    sink = KafkaSink(config, EgressGuard.allowing(["127.0.0.0/8"]), dropped.append)
    batch = EntryBatch(b"", 3)
    wire = jsonline.WireNames(8)
    for n in range(3):
        batch.add((b'{"n":', b"}"), 1_790_000_000.5, {}, None, [], None, None, wire, None, None, n)
    try:
        await sink(batch)
        assert [m.value for m in kafka.topic_messages(TOPIC)] == [
            b'{"n":0}',
            b'{"n":1}',
            b'{"n":2}',
        ]
        kafka.error_code = TOPIC_AUTHORIZATION_FAILED
        with pytest.raises(BatchFailed, match="TopicAuthorizationFailedError"):
            await sink(batch)
        assert dropped == []  # (a sync batch's failure is the processor's to count)
    finally:
        await sink.aclose()


async def test_async_producer_type_delivers_too(
    gateway: Running, backend: int, kafka: KafkaBroker
) -> None:
    await gateway.gw.apply(environment(backend, [stream_logger(kafka.port, producer_type="async")]))
    for n in range(3):
        assert (await gateway.client.get(f"/n/{n}")).status_code == 200
    await eventually(lambda: len(kafka.topic_messages(TOPIC)) == 3)
    assert {m.key for m in kafka.topic_messages(TOPIC)} == {None}  # no key: spread


async def test_a_refused_batch_is_retried_then_dropped_and_counted(
    gateway: Running, backend: int, kafka: KafkaBroker
) -> None:
    kafka.error_code = TOPIC_AUTHORIZATION_FAILED
    await gateway.gw.apply(environment(backend, [stream_logger(kafka.port, max_retry_count=1)]))
    assert (await gateway.client.get("/x")).status_code == 200
    await until_metric(gateway, DROPPED, {"plugin": "stream-logger"}, 1)
    assert kafka.produce_requests == 2  # the first try and one retry
    assert kafka.topic_messages(TOPIC) == []


async def test_an_async_batch_the_broker_refuses_is_counted_as_dropped(
    gateway: Running, backend: int, kafka: KafkaBroker
) -> None:
    """``producer_type: async`` hands each batch over and goes on: a refusal that comes
    later is not retried, its entries are counted as dropped."""
    kafka.error_code = TOPIC_AUTHORIZATION_FAILED
    logger = stream_logger(kafka.port, producer_type="async", max_retry_count=1)
    await gateway.gw.apply(environment(backend, [logger]))
    for n in range(2):
        assert (await gateway.client.get(f"/n/{n}")).status_code == 200
    await until_metric(gateway, DROPPED, {"plugin": "stream-logger"}, 2)
    assert kafka.produce_requests == 2  # one request a batch of one entry, none again
    assert kafka.topic_messages(TOPIC) == []


async def test_a_broker_that_is_down_costs_no_request(gateway: Running, backend: int) -> None:
    with KafkaBroker() as gone:  # a port that was open once, then nothing listens
        pass
    await gateway.gw.apply(environment(backend, [stream_logger(gone.port, timeout=1)]))
    for n in range(3):
        assert (await gateway.client.get(f"/n/{n}")).status_code == 200
    await until_metric(gateway, DROPPED, {"plugin": "stream-logger"}, 3)


async def test_a_loopback_broker_is_refused_without_the_egress_allowance(
    guarded_gateway: Running, backend: int, kafka: KafkaBroker
) -> None:
    await guarded_gateway.gw.apply(environment(backend, [stream_logger(kafka.port)]))
    assert (await guarded_gateway.client.get("/x")).status_code == 200
    await until_metric(guarded_gateway, DROPPED, {"plugin": "stream-logger"}, 1)
    assert kafka.produce_requests == 0


async def test_closing_the_gateway_flushes_the_batch_then_stops_the_producer(
    backend: int, kafka: KafkaBroker
) -> None:
    running, servers = await _start(GatewayOptions(node_id="node-1", egress_allow=("127.0.0.0/8",)))
    logger = stream_logger(kafka.port, batch_max_size=100, inactive_timeout=3600)
    await running.gw.apply(environment(backend, [logger]))
    assert (await running.client.get("/first")).status_code == 200
    await eventually(lambda: kafka.produce_requests == 0)  # held in the batch
    assert (await running.client.get("/second")).status_code == 200
    await _stop(running, servers)
    uris = [json.loads(m.value or b"{}")["request"]["uri"] for m in kafka.topic_messages(TOPIC)]
    assert uris == ["/first", "/second"]
