"""stream-logger: log entries produced to a Kafka topic.

The seed names the topic field "``<broker>_topic``": APISIX's kafka-logger calls it
``kafka_topic``, and the seed writes product names with a neutral word (kafka-logger became
stream-logger), so ``<broker>`` stands for that word and the field is ``stream_topic``.

At run time each entry is one message (its JSON as the value, ``key`` as the key) produced by
aiokafka's producer to ``stream_topic``. The producer belongs to the configuration, as its
batch does (:class:`KafkaSink`, a shared resource): started by the first batch, kept across
deploys that keep the configuration, stopped after the batch's last flush when the
configuration goes or the gateway closes. ``producer_type: sync`` waits for the brokers'
acknowledgements (``required_acks``) of each batch, so a refused batch is retried then
dropped and counted; ``async`` hands the messages to the producer and goes on, counting as
dropped the messages whose delivery fails later.

The SSRF guard checks the brokers: the bootstrap brokers are connected to at the addresses the
guard resolved, and the brokers the cluster advertises in its metadata (where the producer
connects next) are checked before each batch.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import ipaddress
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner
from pydantic import AfterValidator, Field, field_validator

from portico.gateway.egress import EgressGuard, EgressRefused
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._batching import BatchingConfig, config_key
from portico.gateway.plugins._log_sink import EntryBatch, LoggerRuntime
from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.telemetry import recordbatch
from portico.gateway.telemetry.batch import BatchFailed
from portico.gateway.telemetry.metrics import GatewayMetrics

_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")


def _broker_host(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if len(value) > 253 or not _HOSTNAME.match(value):
            raise ValueError(f"broker {value!r} is not a hostname or IP address") from None
    return value


BrokerHost = Annotated[str, AfterValidator(_broker_host)]
BrokerPort = Annotated[int, Field(ge=1, le=65535)]


class StreamLoggerConfig(BatchingConfig):
    broker_list: dict[BrokerHost, BrokerPort] = Field(
        min_length=1,
        max_length=64,
        description='Kafka brokers as host → port, e.g. {"kafka-1": 9092, "10.0.0.7": 9092}.',
    )
    stream_topic: str = Field(
        pattern=r"^[A-Za-z0-9._-]{1,249}$",
        description='Kafka topic the entries are produced to. The seed\'s "<broker>_topic": '
        "APISIX's kafka_topic with the product name replaced by the seed's neutral word.",
    )
    key: str | None = Field(
        None,
        min_length=1,
        max_length=256,
        description="Message key (picks the partition); unset spreads entries over partitions.",
    )
    timeout: int = Field(3, ge=1, le=60, description="Seconds to wait for a broker.")
    producer_type: Literal["async", "sync"] = Field(
        "async",
        description='"async" buffers messages in the producer, "sync" sends each batch and '
        "waits for the acknowledgement.",
    )
    required_acks: int = Field(
        1,
        ge=-1,
        le=1,
        description="Acknowledgements awaited: 1 (the partition leader) or -1 (all in-sync "
        "replicas); 0 (none, so losses go unseen) is refused as APISIX does.",
    )

    @field_validator("stream_topic")
    @classmethod
    def _not_dots(cls, topic: str) -> str:
        if topic in (".", ".."):
            raise ValueError('stream_topic cannot be "." or ".."')  # Kafka refuses them
        return topic

    @field_validator("required_acks")
    @classmethod
    def _acknowledged(cls, acks: int) -> int:
        if acks == 0:
            raise ValueError("required_acks must be 1 or -1 (0 is not supported)")
        return acks


PLUGIN = PluginSpec(
    name="stream-logger",
    category=Category.OBSERVABILITY,
    order=951,
    reorderable=True,
    config=StreamLoggerConfig,
    description="Produces log entries to a Kafka topic.",
)


MAX_REQUEST_BYTES = 1024 * 1024
_PARTITIONER = DefaultPartitioner()  # Kafka's: murmur2 of the key, or any partition
_encode = recordbatch.encode


class PreparedBatch:
    """A record batch written whole, handed to the producer (``send_batch``) in place of the
    ``BatchBuilder`` of ``producer.create_batch()``: the producer asks it for its bytes
    (``_build``), size and count, and finds it closed to ``send()``'s messages. (aiokafka's
    own interface to a builder, pinned with its version; the tests produce through it to a
    broker that reads every batch back.)"""

    __slots__ = ("_count", "_data")

    def __init__(self, data: bytes, count: int) -> None:
        self._data = data
        self._count = count

    def append(self, **_: Any) -> None:
        return None  # closed: a message sent with send() goes to a batch of its own

    def close(self) -> None:
        return None

    def closed(self) -> bool:
        return True

    def _build(self) -> bytes:
        return self._data

    def size(self) -> int:
        return len(self._data)

    def record_count(self) -> int:
        return self._count


class KafkaSink:
    """The producer of one configuration and the Sink that writes a batch with it."""

    def __init__(
        self, config: StreamLoggerConfig, guard: EgressGuard, dropped: Callable[[int], None]
    ) -> None:
        self.config = config
        self.guard = guard
        self.count_dropped = dropped  # the drops metric (async deliveries that failed)
        self.key = config.key.encode() if config.key is not None else None
        self.timeout = float(config.timeout)
        self._producer: AIOKafkaProducer | None = None
        self._starting = asyncio.Lock()
        self._closed = False

    async def producer(self) -> AIOKafkaProducer:
        async with self._starting:
            if self._producer is None:
                self._producer = await self._start()
            return self._producer

    async def _start(self) -> AIOKafkaProducer:
        bootstrap = []
        for host, port in self.config.broker_list.items():
            try:
                address = await self.guard.resolve(host, port)
            except EgressRefused as error:
                raise BatchFailed(f"refused by the egress guard: {error}") from None
            bootstrap.append(f"[{address}]:{port}" if ":" in address else f"{address}:{port}")
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap,
            client_id="portico",
            acks="all" if self.config.required_acks == -1 else 1,
            request_timeout_ms=self.config.timeout * 1000,
            enable_idempotence=False,  # no InitProducerId: what APISIX's producer does too
            # a whole batch of entries in one request per partition (the default, 16 KiB,
            # made a batch of 1000 entries ~70 round trips); 1 MiB is the broker's default
            # message.max.bytes
            max_batch_size=MAX_REQUEST_BYTES,
            max_request_size=MAX_REQUEST_BYTES,
        )
        try:
            await asyncio.wait_for(producer.start(), self.timeout)
        except BaseException:
            await producer.stop()
            raise
        return producer

    async def _check_advertised(self, producer: AIOKafkaProducer) -> None:
        for broker in producer.client.cluster.brokers():
            try:
                await self.guard.resolve(broker.host, broker.port)
            except EgressRefused as error:
                raise BatchFailed(f"an advertised broker is refused: {error}") from None

    async def __call__(self, batch: EntryBatch) -> None:
        if self._closed:
            raise BatchFailed("the producer is stopped")
        producer = await self.producer()
        await self._check_advertised(producer)
        topic, key = self.config.stream_topic, self.key
        partitions = sorted(await producer.partitions_for(topic))
        # one partition per batch: the key's (every entry has the same key), or any one
        partition = _PARTITIONER(key, partitions, partitions)
        # record batches written whole (``telemetry.recordbatch``, C in the native build) and
        # handed over as they are: aiokafka's builder, a record appended at a time, cost
        # more than writing the entry itself
        lines, logged_at = batch.lines(), batch.logged_at()
        deliveries: list[tuple[asyncio.Future[Any], int]] = []  # (delivery, entries)
        start = 0
        while start < len(lines):
            data, end = _encode(lines, logged_at, key, start, MAX_REQUEST_BYTES)
            prepared = PreparedBatch(data, end - start)
            sent = await producer.send_batch(prepared, topic, partition=partition)
            deliveries.append((sent, end - start))
            start = end
        if self.config.producer_type == "sync":
            await asyncio.wait_for(asyncio.gather(*(d for d, _ in deliveries)), self.timeout)
            return
        for delivery, entries in deliveries:
            delivery.add_done_callback(functools.partial(self._delivered, entries))

    def _delivered(self, entries: int, delivery: asyncio.Future[Any]) -> None:
        if delivery.cancelled() or delivery.exception() is not None:
            self.count_dropped(entries)

    async def aclose(self) -> None:
        """Stop the producer (after the batch's last flush: registered after it, it is
        closed after it). Whatever it still buffers is sent within its own timeouts."""
        self._closed = True
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()


class StreamLoggerRuntime(LoggerRuntime):
    def __init__(self, config: StreamLoggerConfig, services: RuntimeServices) -> None:
        metrics = services.shared("metrics", "", GatewayMetrics)
        sink = KafkaSink(config, services.egress, metrics.dropped_counter(PLUGIN.name))
        super().__init__(
            PLUGIN.name, config, services, sink, close_grace=min(5.0, float(config.timeout))
        )
        # after the batch: SharedResources closes in creation order, so the batch's last
        # flush still has its producer (a sink kept from an earlier snapshot comes back
        # with the batch that uses it: one key for both)
        services.shared("stream-producer", config_key(PLUGIN.name, config), lambda: sink)


PLUGIN = dataclasses.replace(PLUGIN, runtime=StreamLoggerRuntime)
