"""Kafka record batches (magic 2, uncompressed) written from a logger's entries: the
reference implementation.

stream-logger produces each batch of entries as Kafka record batches. Through aiokafka's
builder they cost ~7,700 instructions an entry (callgrind): its ``append`` per record, its
buffer grown by reallocation, and a CRC-32C computed a byte at a time. ``recordbatch.c`` is
this module in C, compiled with the gateway's hot modules (``scripts/build_native.py``) and
found first while the build is current (``portico.native``), with the CRC-32C of the CPU
(SSE 4.2) where it has one; this file is what runs otherwise, and what the C module is tested
against (``tests/gateway/test_recordbatch.py``: the same bytes for the same input, and the
bytes aiokafka's own builder writes).

A batch is what aiokafka's ``BatchBuilder`` (``producer.create_batch()``) builds: base offset
0, no partition leader epoch, attributes 0, producer id and epoch -1, base sequence 0, each
record's offset delta its place in the batch, timestamps in milliseconds (the first record's
is the batch's first timestamp, the others are deltas from it), no headers.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Final

from aiokafka.record.util import calc_crc32c

#: base offset, length, partition leader epoch, magic, CRC, attributes, last offset delta,
#: first and max timestamps, producer id and epoch, base sequence, record count
HEADER: Final = struct.Struct(">qiibIhiqqqhii")
#: the length counts from here; the CRC covers from here (attributes) to the end
_AFTER_LENGTH: Final = 12
_CRC_AT: Final = 17
_ATTRIBUTES_AT: Final = 21
_NULL: Final = 1  # the varint of -1: no key


def _varint(value: int, out: bytearray) -> None:
    """Kafka's varint: zigzag, then seven bits a byte, least significant first."""
    bits = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    while bits >= 0x80:
        out.append((bits & 0x7F) | 0x80)
        bits >>= 7
    out.append(bits)


def _varint_size(value: int) -> int:
    bits = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    size = 1
    while bits >= 0x80:
        bits >>= 7
        size += 1
    return size


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
    out = bytearray(HEADER.size)
    first = int(logged_at[start] * 1000)
    latest = first
    index = start
    while index < len(values):
        value = values[index]
        if not isinstance(value, bytes):
            raise TypeError("values must be bytes")
        stamp = int(logged_at[index] * 1000)
        record = bytearray(b"\x00")  # attributes
        _varint(stamp - first, record)
        _varint(index - start, record)
        if key is None:
            record.append(_NULL)
        else:
            _varint(len(key), record)
            record += key
        _varint(len(value), record)
        record += value
        record.append(0)  # no headers
        if index > start and len(out) + len(record) + _varint_size(len(record)) > max_bytes:
            break
        _varint(len(record), out)
        out += record
        latest = max(latest, stamp)
        index += 1
    count = index - start
    HEADER.pack_into(
        out, 0, 0, len(out) - _AFTER_LENGTH, -1, 2, 0, 0, count - 1, first, latest, -1, -1, 0, count
    )
    struct.pack_into(">I", out, _CRC_AT, calc_crc32c(bytes(out[_ATTRIBUTES_AT:])))
    return bytes(out), index
