"""A single-node Kafka broker on loopback that speaks the real wire protocol, for
stream-logger's tests.

Kafka does not install from the registries this project uses (it is neither a Debian package
nor on PyPI or npm), so this broker stands in for it. It implements the requests a producer
makes, at the versions it announces: ApiVersions v0, Metadata v0-v1 and Produce v3 (record
batches of format v2, the only one aiokafka writes). Requests and responses are encoded and
decoded with aiokafka's own protocol classes and the record batches read with its record
classes, so the bytes are Kafka's, not a private format. Every topic asked for exists (as with
``auto.create.topics.enable``), with one partition led by this broker; what is produced is
kept for the test to read back (:attr:`KafkaBroker.messages`). ``error_code`` makes every
Produce fail with that Kafka error (e.g. 29, TOPIC_AUTHORIZATION_FAILED, not retriable).

By hand (see by_hand.py), it serves until stopped and prints a line for each record produced:

    .venv/bin/python tests/support/kafkabroker.py --port 9092
"""

from __future__ import annotations

if __name__ == "__main__" and not __package__:  # run by its path: see by_hand.py
    from by_hand import run_as_module

    run_as_module(__file__)

import argparse
import socket
import socketserver
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BytesIO
from types import TracebackType
from typing import Any

from aiokafka.protocol.admin import ApiVersionRequest_v0, ApiVersionResponse_v0
from aiokafka.protocol.metadata import (
    MetadataRequest_v0,
    MetadataRequest_v1,
    MetadataResponse_v0,
    MetadataResponse_v1,
)
from aiokafka.protocol.produce import ProduceRequest_v3, ProduceResponse_v3
from aiokafka.record.memory_records import MemoryRecords

from . import by_hand

API_VERSIONS, METADATA, PRODUCE = 18, 3, 0
#: what the broker announces: api key → (min, max version)
SUPPORTED = {API_VERSIONS: (0, 0), METADATA: (0, 1), PRODUCE: (3, 3)}
REQUESTS: dict[tuple[int, int], Any] = {
    (API_VERSIONS, 0): ApiVersionRequest_v0,
    (METADATA, 0): MetadataRequest_v0,
    (METADATA, 1): MetadataRequest_v1,
    (PRODUCE, 3): ProduceRequest_v3,
}
UNSUPPORTED_VERSION = 35
NODE_ID = 1


@dataclass
class Message:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None

    def __str__(self) -> str:
        return f"{self.topic}[{self.partition}]@{self.offset} key {self.key!r}: {self.value!r}"


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True  # a broker stopped with clients connected starts again at once


@dataclass
class KafkaBroker:
    """Serves on ``host``:``port`` (a free loopback port by default) from ``with`` to its end;
    each record kept is also given to ``report``, if set."""

    port: int = 0
    #: Kafka error code every Produce is answered with (0: accept)
    error_code: int = 0
    messages: list[Message] = field(default_factory=list)
    produce_requests: int = 0
    #: the acks each Produce asked for
    acks: list[int] = field(default_factory=list)
    #: False: records are counted from their batches' headers, not read nor kept (a
    #: benchmark's broker: reading each record in Python took the CPU the gateway measured
    #: needs on a small machine)
    decode: bool = True
    #: records taken, by topic (the next offset)
    counts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    host: str = "127.0.0.1"
    report: Callable[[Message], None] | None = None
    _server: _Server | None = None

    def __enter__(self) -> KafkaBroker:
        broker = self

        class Connection(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                broker._serve(self.request)

        server = _Server((self.host, self.port), Connection)
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def reset(self) -> None:
        with self.lock:
            self.error_code = 0
            self.messages.clear()
            self.counts.clear()
            self.produce_requests = 0
            self.acks.clear()

    def topic_messages(self, topic: str) -> list[Message]:
        with self.lock:
            return [m for m in self.messages if m.topic == topic]

    # ------------------------------------------------------------------ the protocol

    def _serve(self, sock: socket.socket) -> None:
        try:
            while True:
                size = _read_exactly(sock, 4)
                if size is None:
                    return
                frame = _read_exactly(sock, struct.unpack(">i", size)[0])
                if frame is None:
                    return
                answer = self._answer(frame)
                sock.sendall(struct.pack(">i", len(answer)) + answer)
        except OSError:
            return

    def _answer(self, frame: bytes) -> bytes:
        data = BytesIO(frame)
        api_key, version, correlation_id = struct.unpack(">hhi", data.read(8))
        (client_id_length,) = struct.unpack(">h", data.read(2))
        if client_id_length > 0:
            data.read(client_id_length)
        header = struct.pack(">i", correlation_id)
        kind = REQUESTS.get((api_key, version))
        if kind is None:
            if api_key == API_VERSIONS:  # a newer client asking first: v0's answer, an error
                return header + ApiVersionResponse_v0(UNSUPPORTED_VERSION, []).encode()
            raise OSError(f"unsupported request {api_key} v{version}")  # closes the socket
        request = kind.decode(data)
        if api_key == API_VERSIONS:
            versions = [(key, low, high) for key, (low, high) in SUPPORTED.items()]
            return header + ApiVersionResponse_v0(0, versions).encode()
        if api_key == METADATA:
            return header + self._metadata(request, version)
        return header + self._produce(request)

    def _metadata(self, request: Any, version: int) -> bytes:
        with self.lock:
            known = sorted({m.topic for m in self.messages})
        topics = request.topics if request.topics else known  # none named: all of them
        partitions = [(0, 0, NODE_ID, [NODE_ID], [NODE_ID])]
        if version == 0:
            brokers0 = [(NODE_ID, self.host, self.port)]
            return MetadataResponse_v0(
                brokers0, [(0, topic, partitions) for topic in topics]
            ).encode()
        brokers1 = [(NODE_ID, self.host, self.port, None)]
        return MetadataResponse_v1(
            brokers1, NODE_ID, [(0, topic, False, partitions) for topic in topics]
        ).encode()

    def _produce(self, request: Any) -> bytes:
        answered = []
        with self.lock:
            self.produce_requests += 1
            self.acks.append(request.required_acks)
            for topic, partitions in request.topics:
                results = []
                for partition, raw in partitions:
                    offset = self.counts.get(topic, 0)
                    if self.error_code:
                        results.append((partition, self.error_code, -1, -1))
                        continue
                    base = offset
                    if not self.decode:
                        offset += _records_in(raw)
                    else:
                        records = MemoryRecords(raw)
                        while (batch := records.next_batch()) is not None:
                            for record in batch:
                                message = Message(
                                    topic, partition, offset, record.key, record.value
                                )
                                self.messages.append(message)
                                if self.report is not None:
                                    self.report(message)
                                offset += 1
                    self.counts[topic] = offset
                    results.append((partition, 0, base, -1))  # the batch's base offset
                answered.append((topic, results))
        return ProduceResponse_v3(answered, 0).encode()


def _records_in(raw: bytes) -> int:
    """How many records the record batches (magic 2) of ``raw`` hold, from their headers: each
    batch is its base offset (8 bytes), its length (4), then 45 bytes of header fields before
    its record count (4)."""
    count, at = 0, 0
    while at + 61 <= len(raw):
        (length,) = struct.unpack_from(">i", raw, at + 8)
        (records,) = struct.unpack_from(">i", raw, at + 57)
        count += records
        at += 12 + length
    return count


def _read_exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks, wanted = [], size
    while wanted:
        chunk = sock.recv(wanted)
        if not chunk:
            return None
        chunks.append(chunk)
        wanted -= len(chunk)
    return b"".join(chunks)


@contextmanager
def _by_hand(arguments: argparse.Namespace) -> Iterator[str]:
    with KafkaBroker(
        port=arguments.port, host=arguments.host, report=lambda record: by_hand.say(str(record))
    ) as broker:
        yield (
            f"Kafka broker {by_hand.LISTENING} {broker.host}:{broker.port} (node {NODE_ID};"
            " every topic exists, one partition; a line for each record produced)"
        )


if __name__ == "__main__":
    by_hand.serve(by_hand.command_line(__doc__.split("\n\n")[0], port=9092), _by_hand)
