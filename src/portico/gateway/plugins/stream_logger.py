"""stream-logger: log entries produced to a Kafka topic.

The seed names the topic field "``<broker>_topic``": APISIX's kafka-logger calls it
``kafka_topic``, and the seed writes product names with a neutral word (kafka-logger became
stream-logger), so ``<broker>`` stands for that word and the field is ``stream_topic``.

At run time each entry is one message (its JSON as the value, ``key`` as the key) on
``stream_topic``: a batch of entries is written as Kafka record batches and each is sent as
one Produce request (:class:`ProduceFrame`) to the partition's leader, through aiokafka's
client (its connections, metadata and version lookup). The producer belongs to the
configuration, as its batch does (:class:`KafkaSink`, a shared resource): started by the
first batch, kept across deploys that keep the configuration, stopped after the batch's last
flush when the configuration goes or the gateway closes. ``producer_type: sync`` waits for
the brokers' acknowledgements (``required_acks``) of each batch, so a refused batch is
retried then dropped and counted; ``async`` hands the request over and goes on (at most
``MAX_IN_FLIGHT`` awaiting their answer), counting as dropped the messages whose delivery
fails later.

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
import struct
from collections.abc import Callable
from io import BytesIO
from typing import Annotated, Any, Literal, cast

from aiokafka import AIOKafkaProducer
from aiokafka.errors import IncompatibleBrokerVersion, for_code
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.protocol import produce as produce_protocol
from aiokafka.protocol.api import RequestHeader_v1, ResponseHeader_v0
from aiokafka.structs import TopicPartition
from pydantic import AfterValidator, Field, field_validator

from portico.gateway.egress import EgressGuard, EgressRefused
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._batching import BatchingConfig, config_key
from portico.gateway.plugins._log_sink import EntryBatch, LoggerRuntime
from portico.gateway.plugins.base import Category, PluginSpec
from portico.gateway.telemetry.batch import BatchFailed
from portico.gateway.telemetry.metrics import GatewayMetrics

#: refusals that mean the client's view of the cluster is out of date (refetched before the
#: batch is tried again)
_STALE_METADATA = frozenset(
    {"NotLeaderForPartitionError", "UnknownTopicOrPartitionError", "LeaderNotAvailableError"}
)
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
#: Kafka's Produce API, from the version that takes record batches (magic 2) to the last of
#: the same request layout that aiokafka reads answers of
PRODUCE_API = 0
MIN_PRODUCE_VERSION = 3
MAX_PRODUCE_VERSION = 7
#: produce requests of async batches awaiting their answer at once (Kafka's producers'
#: max.in.flight.requests.per.connection); the next batch waits for one of them
MAX_IN_FLIGHT = 5


class ProduceFrame:
    """One Produce request (v3 to v7: one layout) around the record batch of entries
    ``start`` to ``end`` of a batch, sent through aiokafka's client (``AIOKafkaClient.send``:
    its connections, its version lookup, its reading of the answer with ``ProduceResponse``
    of the same version).

    Why not the producer's ``send_batch``: between a batch and the socket its accumulator,
    sender and protocol classes copied a batch's bytes about eight times (a 700 KB batch of
    1000 entries: ~5,000 instructions an entry, more than the entry's writing). Here the
    request is written by one call, when aiokafka asks for it (:meth:`encode`): the record
    batch straight from the entries' buffer (``EntryBatch.record_batch``), after the header
    aiokafka asks for and the request's leading fields. aiokafka then prefixes it with its
    size. :meth:`build_request_header` hands back an empty header, since joined to an empty
    header the request is not copied. This follows aiokafka's request interface
    (``prepare``, ``build_request_header``, ``encode``, ``RESPONSE_TYPE``), pinned with its
    version; the tests produce through it to a broker that decodes every request with
    aiokafka's own ``ProduceRequest``."""

    API_KEY = PRODUCE_API
    FLEXIBLE_VERSION = False

    def __init__(
        self,
        acks: int,
        timeout_ms: int,
        topic: str,
        partition: int,
        records: tuple[EntryBatch, bytes | None, int, int, int],
    ) -> None:
        """``records``: (the batch, the records' key, start, end, the record batch's size as
        ``record_extent`` gave it)."""
        self.required_acks = acks
        self.API_VERSION = MIN_PRODUCE_VERSION
        self.RESPONSE_TYPE: Any = _RESPONSES[MIN_PRODUCE_VERSION]
        self._batch, self._key, self._start, self._end, size = records
        name = topic.encode()
        # transactional id (null), acks, timeout, one topic, one partition, its records
        self._fixed = struct.pack(
            f">hhii h{len(name)}s iii",
            -1,
            acks,
            timeout_ms,
            1,
            len(name),
            name,
            1,
            partition,
            size,
        )
        self._header = b""

    def prepare(self, versions: dict[int, tuple[int, int]]) -> ProduceFrame:
        low, high = versions.get(PRODUCE_API, (0, -1))
        version = min(high, MAX_PRODUCE_VERSION)
        if version < max(low, MIN_PRODUCE_VERSION):
            raise IncompatibleBrokerVersion("the broker takes no record batches (Produce v3+)")
        self.API_VERSION = version
        self.RESPONSE_TYPE = _RESPONSES[version]
        return self

    def build_request_header(self, correlation_id: int, client_id: str) -> _EmptyHeader:
        # (what the header reads of its request: the API key and version)
        request = cast(Any, self)
        self._header = RequestHeader_v1(request, correlation_id, client_id).encode()
        return _EMPTY_HEADER

    def encode(self) -> bytes:
        prefix = self._header + self._fixed
        return self._batch.record_batch(prefix, self._key, self._start, self._end)

    def parse_response_header(self, answer: BytesIO) -> ResponseHeader_v0:
        return ResponseHeader_v0.decode(answer)  # (a Produce answer's header, to v8)


class _EmptyHeader:
    def encode(self) -> bytes:
        return b""


_EMPTY_HEADER = _EmptyHeader()
_RESPONSES: dict[int, Any] = {
    version: getattr(produce_protocol, f"ProduceResponse_v{version}")
    for version in range(MIN_PRODUCE_VERSION, MAX_PRODUCE_VERSION + 1)
}


def _refusal(response: Any) -> str | None:
    """Why the broker refused the batch (its partition's error), or None."""
    for _, partitions in response.topics:
        for result in partitions:
            code = result[1]
            if code:
                return str(for_code(code).__name__)
    return None


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
        self._in_flight: set[asyncio.Future[None]] = set()  # async produce requests

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
        leader = producer.client.cluster.leader_for_partition(TopicPartition(topic, partition))
        if leader is None or leader < 0:
            producer.client.force_metadata_update()
            raise BatchFailed(f"no leader known for {topic}/{partition}")
        # record batches of at most MAX_REQUEST_BYTES, each sent as one Produce request
        # (ProduceFrame: the batch written from the entries' buffer when it is sent)
        acks = self.config.required_acks
        timeout_ms = self.config.timeout * 1000
        start = 0
        while start < len(batch):
            size, end = batch.record_extent(key, start, MAX_REQUEST_BYTES)
            records = (batch, key, start, end, size)
            frame = ProduceFrame(acks, timeout_ms, topic, partition, records)
            if self.config.producer_type == "sync":
                await self._produce(producer, leader, frame)
            else:
                await self._produce_later(producer, leader, frame, end - start)
            start = end

    async def _produce(self, producer: AIOKafkaProducer, leader: int, frame: ProduceFrame) -> None:
        """Send ``frame`` and wait for the broker's answer; BatchFailed when it refused it."""
        async with asyncio.timeout(self.timeout):
            response = await producer.client.send(leader, frame)
        refused = _refusal(response)
        if refused is not None:
            if refused in _STALE_METADATA:
                producer.client.force_metadata_update()
            raise BatchFailed(f"the broker refused the batch: {refused}")

    async def _produce_later(
        self, producer: AIOKafkaProducer, leader: int, frame: ProduceFrame, entries: int
    ) -> None:
        """Send ``frame`` without waiting for its answer (``producer_type: async``): its
        entries are counted as dropped if it fails. At most MAX_IN_FLIGHT at once."""
        while len(self._in_flight) >= MAX_IN_FLIGHT:
            await asyncio.wait(self._in_flight, return_when=asyncio.FIRST_COMPLETED)
        sending = asyncio.ensure_future(self._produce(producer, leader, frame))
        self._in_flight.add(sending)
        sending.add_done_callback(functools.partial(self._delivered, entries))

    def _delivered(self, entries: int, sending: asyncio.Future[None]) -> None:
        self._in_flight.discard(sending)
        if sending.cancelled() or sending.exception() is not None:
            self.count_dropped(entries)

    async def aclose(self) -> None:
        """Stop the producer (after the batch's last flush: registered after it, it is
        closed after it), once the async requests still awaiting their answer have had it or
        ``timeout`` has passed (those left are cancelled, their entries counted as dropped)."""
        self._closed = True
        if self._in_flight:  # async batches still waiting for their answer
            _, late = await asyncio.wait(self._in_flight, timeout=self.timeout)
            for sending in late:
                sending.cancel()  # (counted as dropped by _delivered)
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
