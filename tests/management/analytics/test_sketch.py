"""Stored sketches: both forms read back what was written, and ``Accumulator`` adds any mix
of them up exactly — past 65,535 values per lowest bin too, where its 16-bit sums widen."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from portico.gateway.telemetry.rollups import SKETCH_MAX_INDEX
from portico.management.telemetry import sketch
from portico.management.telemetry.sketch import NARROW_LIMIT, Accumulator

bins = st.integers(min_value=0, max_value=SKETCH_MAX_INDEX)
small_counts = st.integers(min_value=1, max_value=40)
sketches = st.dictionaries(bins, small_counts, max_size=30)
#: a contiguous run of bins around one place, as an hour of one route holds
runs = st.builds(
    lambda low, counts: {low + i: c for i, c in enumerate(counts) if c},
    st.integers(min_value=0, max_value=1500),
    st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=200),
)


def exact(parts: list[dict[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for part in parts:
        for index, count in part.items():
            if count:
                out[index] = out.get(index, 0) + count
    return out


@given(st.one_of(sketches, runs), st.booleans())
def test_a_sketch_reads_back_as_written(bins_: dict[int, int], packed: bool) -> None:
    expected = {i: c for i, c in bins_.items() if c}
    assert sketch.decode(sketch.encode(bins_, packed=packed)) == expected


def test_the_hourly_form_is_packed_from_an_aligned_bin() -> None:
    text = sketch.encode({13: 2}, packed=True)
    assert text == "8:2:00000000000000000000" + "0200"  # bins 8..13: 5 empty fields first
    assert sketch.decode(text) == {13: 2}
    assert sketch.encode({13: 2}) == "13=2"  # a minute's: the shorter form


def test_the_packed_form_holds_16_bit_fields_and_its_count() -> None:
    text = sketch.encode({100: 1, 101: 2, 102: 3, 103: 65535})
    assert text == "100:65541:010002000300ffff"  # shorter than "100=1,101=2,102=3,103=65535"
    assert sketch.decode(text) == {100: 1, 101: 2, 102: 3, 103: 65535}
    # a bin beyond a field's reach: sparse, never truncated
    assert sketch.encode({100: 65536, 101: 1}) == "100=65536,101=1"


def test_the_older_32_bit_form_is_still_read() -> None:
    legacy = f"200:{(7 << 64) | (3 << 32) | 5:x}"
    assert sketch.decode(legacy) == {200: 5, 201: 3, 202: 7}
    accumulator = Accumulator()
    accumulator.add_joined(";".join([legacy, sketch.encode({201: 1})]))
    assert accumulator.sketch() == {200: 5, 201: 4, 202: 7}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(sketches, runs), max_size=40), st.integers(1, 4))
def test_the_accumulator_adds_any_mix_exactly(parts: list[dict[int, int]], groups: int) -> None:
    """Joined in several groups (rows of several periods) and merged, as queries do."""
    accumulators = []
    for g in range(groups):
        accumulator = Accumulator()
        texts = [sketch.encode(part, packed=i % 2 == 0) for i, part in enumerate(parts[g::groups])]
        accumulator.add_joined(";".join(texts))
        accumulators.append(accumulator)
    total = Accumulator()
    for accumulator in accumulators:
        total.merge(accumulator)
    assert total.sketch() == exact(parts)


def test_sums_of_one_lowest_bin_widen_before_a_field_could_overflow() -> None:
    """Thousands of hours of one route, each near the field's limit: every 16-bit sum
    would overflow many times over without widening."""
    hour = {500: NARROW_LIMIT - 5, 501: 3, 502: 2}
    rows = [sketch.encode(hour, packed=True)] * 2000
    rows.append(sketch.encode({500: 1}, packed=True))  # a lone value, same lowest bin
    accumulator = Accumulator()
    for start in range(0, len(rows), 300):  # several group_concat rows
        accumulator.add_joined(";".join(rows[start : start + 300]))
    assert accumulator.sketch() == {500: 2000 * (NARROW_LIMIT - 5) + 1, 501: 6000, 502: 4000}


def test_empty_sketches_and_separators_add_nothing() -> None:
    accumulator = Accumulator()
    accumulator.add_joined(";;" + sketch.encode({3: 1}) + ";")  # sparse only
    accumulator.add_joined(";" + sketch.encode({3: 1}, packed=True) + ";;")
    accumulator.add_joined("")
    assert accumulator.sketch() == {3: 2}
    assert sketch.quantile({}, 0.5) is None
