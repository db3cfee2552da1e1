"""Kafka record batches (magic 2, uncompressed) written from a logger's entries: the
reference implementation, which is aiokafka's own builder.

stream-logger produces each batch of entries as Kafka record batches, each in a Produce
request of its own. Through aiokafka's ``BatchBuilder`` they cost ~7,700 instructions an entry
(callgrind): its ``append`` per record through Python, its buffer grown by reallocation, a
CRC-32C computed a byte at a time. The native build's ``jsonline.EntryBatch`` writes them
from its own buffer (``recordbatch.h``, included by ``jsonline.c``): the batch sized first,
then written once, straight after the request's leading fields (``prefix``), its CRC-32C the
CPU's (SSE 4.2) where it has one; no entry is copied out of the batch first, nor the record
batch into its request afterwards. This file is what runs otherwise (the interpreted
``EntryBatch`` calls it with its lists), and what the C is tested against
(``tests/gateway/test_recordbatch.py``: the same bytes for the same entries, read back by
aiokafka with their CRC checked).

A batch is what aiokafka's ``BatchBuilder`` (``producer.create_batch()``) builds: base offset
0, no partition leader epoch, attributes 0, producer id and epoch -1, base sequence 0, each
record's offset delta its place in the batch, timestamps in milliseconds (the first record's
is the batch's first timestamp, the others are deltas from it), no headers.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from aiokafka.record.default_records import DefaultRecordBatchBuilder


def _checked(values: Sequence[bytes], logged_at: Sequence[float], start: int) -> None:
    if len(values) != len(logged_at):
        raise ValueError("values and logged_at must have the same length")
    if not 0 <= start < len(values):
        raise ValueError("start must index a value")


def _build(
    values: Sequence[bytes],
    logged_at: Sequence[float],
    key: bytes | None,
    start: int,
    stop: int,
    max_bytes: int,
) -> tuple[bytes, int]:
    # the builder is given no limit of its own: which records fit is decided here, the batch
    # at most max_bytes (aiokafka's compiled builder stops one byte short of its batch_size,
    # its pure-Python one at it: tests/gateway/test_recordbatch.py)
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, 0, sys.maxsize)
    index = start
    while index < stop:
        value = values[index]
        if not isinstance(value, bytes):
            raise TypeError("values must be bytes")
        millis = logged_at[index] * 1000
        if not -9.2e18 < millis < 9.2e18:
            raise ValueError("a time out of range")
        stamp = int(millis)
        record = builder.size_in_bytes(index - start, stamp, key, value, [])
        if index > start and builder.size() + record > max_bytes:
            break  # full
        builder.append(index - start, timestamp=stamp, key=key, value=value, headers=[])
        index += 1
    return bytes(builder.build()), index


def extent(
    values: Sequence[bytes],
    logged_at: Sequence[float],
    key: bytes | None,
    start: int,
    max_bytes: int,
) -> tuple[int, int]:
    """``(size, end)``: the size of the record batch of ``values[start:end]`` (each stamped
    ``int(logged_at[i] * 1000)``, milliseconds), as many values as fit in ``max_bytes`` (at
    least one, as aiokafka's builder takes a first record whatever its size)."""
    _checked(values, logged_at, start)
    data, end = _build(values, logged_at, key, start, len(values), max_bytes)
    return len(data), end


def encode(
    values: Sequence[bytes],
    logged_at: Sequence[float],
    key: bytes | None,
    start: int,
    end: int,
    prefix: bytes,
) -> bytes:
    """``prefix`` followed by the record batch of ``values[start:end]`` (``end`` as
    :func:`extent` gave it)."""
    _checked(values, logged_at, start)
    if not start < end <= len(values):
        raise ValueError("end must follow start, within the values")
    if not isinstance(prefix, bytes):
        raise TypeError("prefix must be bytes")
    data, _ = _build(values, logged_at, key, start, end, sys.maxsize)
    return prefix + data
