"""Kafka record batches (magic 2, uncompressed) written from a logger's entries: the
reference implementation, which is aiokafka's own builder.

stream-logger produces each batch of entries as Kafka record batches. Through aiokafka's
``BatchBuilder`` they cost ~7,700 instructions an entry (callgrind): its ``append`` per record
through Python, its buffer grown by reallocation, a CRC-32C computed a byte at a time.
``recordbatch.c`` is this module in C, compiled with the gateway's hot modules
(``scripts/build_native.py``) and found first while the build is current (``portico.native``):
the batch sized first, written once, its CRC-32C the CPU's (SSE 4.2) where it has one. This
file is what runs otherwise (aiokafka's builder, as stream-logger used it before), and what
the C module is tested against (``tests/gateway/test_recordbatch.py``: the same bytes for the
same input, read back by aiokafka with their CRC checked).

A batch is what aiokafka's ``BatchBuilder`` (``producer.create_batch()``) builds: base offset
0, no partition leader epoch, attributes 0, producer id and epoch -1, base sequence 0, each
record's offset delta its place in the batch, timestamps in milliseconds (the first record's
is the batch's first timestamp, the others are deltas from it), no headers.
"""

from __future__ import annotations

from collections.abc import Sequence

from aiokafka.record.default_records import DefaultRecordBatchBuilder


def encode(
    values: Sequence[bytes],
    logged_at: Sequence[float],
    key: bytes | None,
    start: int,
    max_bytes: int,
) -> tuple[bytes, int]:
    """The record batch of ``values[start:]`` (each stamped ``int(logged_at[i] * 1000)``,
    milliseconds), as many as fit in ``max_bytes`` (at least one, as aiokafka's builder
    takes a first record whatever its size), and the index of the first value left out."""
    if len(values) != len(logged_at):
        raise ValueError("values and logged_at must have the same length")
    if not 0 <= start < len(values):
        raise ValueError("start must index a value")
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, 0, max_bytes)
    index = start
    while index < len(values):
        value = values[index]
        if not isinstance(value, bytes):
            raise TypeError("values must be bytes")
        stamp = int(logged_at[index] * 1000)
        if builder.append(index - start, timestamp=stamp, key=key, value=value, headers=[]) is None:
            break  # full
        index += 1
    return bytes(builder.build()), index
