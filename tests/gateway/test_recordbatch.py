"""Kafka record batches written by ``telemetry.recordbatch``: the C module and the reference
(``recordbatch.py``, aiokafka's own builder) write the same bytes for the same input, the
bytes stream-logger produced before (``BatchBuilder``, a new one when one is full), which
aiokafka reads back with their CRC checked. The C module is the one of the current native
build (``make native``); where there is none, the reference alone is checked."""

from __future__ import annotations

from types import ModuleType

import pytest
from aiokafka.producer.message_accumulator import BatchBuilder
from aiokafka.record.default_records import DefaultRecordBatch
from hypothesis import given, settings
from hypothesis import strategies as st

from portico import native
from portico.gateway.telemetry import recordbatch as loaded
from tests.support.c_modules import implementations
from tests.support.kafkabroker import _records_in

MODULE = "portico.gateway.telemetry.recordbatch"


REFERENCE, C, IMPLEMENTATIONS = implementations(MODULE)


def by_aiokafka(
    values: list[bytes], logged_at: list[float], key: bytes | None, max_bytes: int
) -> list[bytes]:
    """What stream-logger did before: aiokafka's builder, a new one when one is full."""
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
    batches, start = [], 0
    while start < len(values):
        batch, start = module.encode(values, logged_at, key, start, max_bytes)
        batches.append(batch)
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
def test_bad_input_is_refused(module: ModuleType) -> None:
    with pytest.raises(ValueError, match="same length"):
        module.encode([b"a"], [1.0, 2.0], None, 0, 100)
    with pytest.raises(ValueError, match="start"):
        module.encode([b"a"], [1.0], None, 1, 100)
    with pytest.raises(TypeError):
        module.encode(["a"], [1.0], None, 0, 100)
    batch, end = module.encode([b"a" * 200, b"b"], [1.0, 2.0], b"k", 0, 100)
    assert end == 1  # the first record goes whatever its size; the next waits
    assert [r.value for r in DefaultRecordBatch(bytearray(batch))] == [b"a" * 200]


def test_the_c_module_is_the_one_the_gateway_uses_when_built() -> None:
    if not native.active():
        pytest.skip("the interpreted modules run (PORTICO_NATIVE=0 or no current build)")
    assert native.compiled(loaded)


@settings(max_examples=50, deadline=None)
@given(counts=st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=4))
def test_the_bench_broker_counts_records_from_the_batch_headers(counts: list[int]) -> None:
    """The benchmark's broker (``KafkaBroker(decode=False)``) counts what a Produce holds
    from its record batches' headers: the count aiokafka reads."""

    raw = b""
    for count in counts:
        data, end = REFERENCE.encode([b"x" * 40] * count, [1.0] * count, None, 0, 1 << 20)
        assert end == count
        raw += data
    assert _records_in(raw) == sum(counts)
