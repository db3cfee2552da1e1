"""Kafka record batches written from a logger's batch of entries (``EntryBatch.record_extent``
and ``record_batch``): the native build's ``EntryBatch`` (``recordbatch.h``, in
``jsonline.c``) and the reference's (``recordbatch.py``, aiokafka's own builder) write the same
bytes for the same entries, the bytes stream-logger produced before (``BatchBuilder``, a new
one when one is full), which aiokafka reads back with their CRC checked. The C is the one of
the current native build (``make native``); where there is none, the reference alone is
checked."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from aiokafka.producer.message_accumulator import BatchBuilder
from aiokafka.record.default_records import (
    DefaultRecordBatch,
    DefaultRecordBatchBuilder,
    _DefaultRecordBatchBuilderPy,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from portico.gateway.telemetry import recordbatch
from tests.support.c_modules import implementations
from tests.support.kafkabroker import _records_in

REFERENCE, C, IMPLEMENTATIONS = implementations("portico.gateway.telemetry.jsonline")


def entry_batch(module: ModuleType, values: list[bytes], logged_at: list[float]) -> Any:
    """A batch of ``module`` holding each value as an entry (one piece, no values: written
    as it is), logged at its time."""
    batch = module.EntryBatch(b"\n", len(values))
    wire = module.WireNames(8)
    for value, at in zip(values, logged_at, strict=True):
        batch.add((value,), at, {}, None, [], None, None, wire, None, None)
    return batch


#: aiokafka's compiled builder (the one it uses where its extensions are built, as here)
#: refuses a record that would make the batch exactly its batch_size; its pure-Python builder,
#: and Portico, take it (a batch is at most max_bytes)
_COMPILED_SLACK = 0 if DefaultRecordBatchBuilder is _DefaultRecordBatchBuilderPy else 1


def by_aiokafka(
    values: list[bytes], logged_at: list[float], key: bytes | None, max_bytes: int
) -> list[bytes]:
    """What stream-logger did before: aiokafka's builder, a new one when one is full."""
    max_bytes += _COMPILED_SLACK
    batches, builder = [], BatchBuilder(max_bytes, 0)
    for value, at in zip(values, logged_at, strict=True):
        stamp = int(at * 1000)
        if builder.append(timestamp=stamp, key=key, value=value) is None:
            batches.append(bytes(builder._build()))
            builder = BatchBuilder(max_bytes, 0)
            assert builder.append(timestamp=stamp, key=key, value=value) is not None
    if builder.record_count():
        batches.append(bytes(builder._build()))
    return batches


def by(
    module: ModuleType,
    values: list[bytes],
    logged_at: list[float],
    key: bytes | None,
    max_bytes: int,
) -> list[bytes]:
    """Each record batch of ``module``'s EntryBatch, as stream-logger asks for them, with a
    prefix in front (its Produce request's leading fields) that is checked and taken off."""
    batch = entry_batch(module, values, logged_at)
    batches, start = [], 0
    while start < len(values):
        size, end = batch.record_extent(key, start, max_bytes)
        prefix = b"prefix:%d" % start
        written = batch.record_batch(prefix, key, start, end)
        assert written.startswith(prefix) and len(written) == len(prefix) + size
        batches.append(written[len(prefix) :])
        start = end
    return batches


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.binary(max_size=300), min_size=1, max_size=40),
    base=st.floats(min_value=0, max_value=4e9),
    steps=st.lists(st.floats(min_value=-5, max_value=5), min_size=40, max_size=40),
    key=st.none() | st.binary(max_size=20),
    max_bytes=st.sampled_from([64, 500, 2000, 1024 * 1024]),
)
def test_batches_are_aiokafkas_bytes(
    values: list[bytes], base: float, steps: list[float], key: bytes | None, max_bytes: int
) -> None:
    logged_at = [base + step for step in steps[: len(values)]]
    expected = by_aiokafka(values, logged_at, key, max_bytes)
    assert by(REFERENCE, values, logged_at, key, max_bytes) == expected
    if C is not None:
        assert by(C, values, logged_at, key, max_bytes) == expected
    read = [record for batch in expected for record in DefaultRecordBatch(bytearray(batch))]
    assert [r.value for r in read] == values and {r.key for r in read} <= {key}
    for batch in expected:
        assert DefaultRecordBatch(bytearray(batch)).validate_crc()


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_a_batch_of_exactly_max_bytes_is_kept_whole(module: ModuleType) -> None:
    values, logged_at = [bytes(10)] * 5 + [bytes(7)], [1000.0] * 6
    whole = len(by(module, values, logged_at, None, 1 << 20)[0])
    assert len(by(module, values, logged_at, None, whole)) == 1
    last = 14  # the last record: its length (1 byte), attributes, stamp and offset deltas,
    # null key (1 each), value's length (1) and 7 bytes, headers' count (1)
    split = by(module, values, logged_at, None, whole - 1)
    assert [len(b) for b in split] == [whole - last, 61 + last]  # (61: a batch's header)


def test_aiokafkas_builders_still_differ_by_one_byte() -> None:
    """What _COMPILED_SLACK stands for: if aiokafka's builders agree one day, it goes."""
    values = [bytes(10)] * 5 + [bytes(7)]

    def count(builder_type: Any, batch_size: int) -> int:
        builder = builder_type(2, 0, 0, -1, -1, 0, batch_size)
        return sum(
            builder.append(i, timestamp=1, key=None, value=v, headers=[]) is not None
            for i, v in enumerate(values)
        )

    whole = len(entry_batch(REFERENCE, values, [0.001] * 6).record_batch(b"", None, 0, 6))
    assert count(_DefaultRecordBatchBuilderPy, whole) == 6
    assert count(DefaultRecordBatchBuilder, whole) == 6 - _COMPILED_SLACK


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_bad_input_is_refused(module: ModuleType) -> None:
    batch = entry_batch(module, [b"a" * 200, b"b"], [1.0, 2.0])
    for start in (-1, 2):
        with pytest.raises(ValueError, match="start"):
            batch.record_extent(None, start, 100)
        with pytest.raises(ValueError, match="start"):
            batch.record_batch(b"", None, start, 2)
    for end in (0, 3):
        with pytest.raises(ValueError, match="end"):
            batch.record_batch(b"", None, 0, end)
    with pytest.raises(TypeError):
        batch.record_batch("prefix", None, 0, 1)
    with pytest.raises(TypeError):
        batch.record_extent("key", 0, 100)
    with pytest.raises(ValueError, match="time"):
        entry_batch(module, [b"a"], [1e300]).record_extent(None, 0, 100)
    size, end = batch.record_extent(b"k", 0, 100)
    assert end == 1  # the first record goes whatever its size; the next waits
    data = batch.record_batch(b"", b"k", 0, end)
    assert len(data) == size
    assert [r.value for r in DefaultRecordBatch(bytearray(data))] == [b"a" * 200]


def test_the_reference_is_aiokafkas_builder() -> None:
    """What the interpreted EntryBatch calls, on lists: refused as the C refuses."""
    with pytest.raises(ValueError, match="same length"):
        recordbatch.extent([b"a"], [1.0, 2.0], None, 0, 100)
    with pytest.raises(TypeError):
        recordbatch.extent(["a"], [1.0], None, 0, 100)  # type: ignore[list-item]
    assert (
        recordbatch.encode([b"a", b"b"], [1.0, 1.0], None, 0, 2, b"")
        == by_aiokafka([b"a", b"b"], [1.0, 1.0], None, 1 << 20)[0]
    )


@settings(max_examples=50, deadline=None)
@given(counts=st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=4))
def test_the_bench_broker_counts_records_from_the_batch_headers(counts: list[int]) -> None:
    """The benchmark's broker (``KafkaBroker(decode=False)``) counts what a Produce holds
    from its record batches' headers: the count aiokafka reads."""

    raw = b""
    for count in counts:
        size, end = recordbatch.extent([b"x" * 40] * count, [1.0] * count, None, 0, 1 << 20)
        assert end == count
        data = recordbatch.encode([b"x" * 40] * count, [1.0] * count, None, 0, end, b"")
        assert len(data) == size
        raw += data
    assert _records_in(raw) == sum(counts)
