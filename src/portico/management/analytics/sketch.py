"""The stored form of percentile sketches, and merging them fast enough to answer a query.

A sketch is bin → count (bins as ``portico.gateway.telemetry.sketch_index`` maps values:
1 % relative accuracy). Stored as text in one of two forms, whichever is shorter:

* sparse ``"i=c,i=c"`` — a minute's rollup of a few requests holds a few bins;
* packed ``"o:hex"`` — the counts of bins ``o``, ``o+1``... as one hexadecimal integer,
  ``FIELD_BITS`` bits per bin, bin ``o`` in the lowest bits: an hour's rollup holds a
  contiguous run of bins.

Merging thousands of rows per query in Python one bin at a time is too slow (measured in
``bench/bench_analytics.py``); a packed sketch is instead read with one ``int(text, 16)``
and shifted into place, and adding two such integers adds every bin at once, in C. That
holds while no bin overflows its field: ``Accumulator`` knows the total it has added and
falls back to a per-bin dict beyond ``FIELD_LIMIT``. Sparse sketches are joined as text and
counted with one ``Counter`` over their tokens.
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter
from collections.abc import Iterable

from portico.gateway.telemetry import SKETCH_MAX_INDEX, sketch_index, sketch_value

#: upper bounds (ms) of the 12-bucket latency histogram nodes sent before sketches (the
#: last bucket is unbounded)
LEGACY_BUCKETS_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
LEGACY_BUCKET_COUNT = len(LEGACY_BUCKETS_MS) + 1

_from_bytes = int.from_bytes
_from_hex = bytes.fromhex
FIELD_BITS = 32
FIELD_LIMIT = 1 << FIELD_BITS
_HEX_PER_FIELD = FIELD_BITS // 4
_MASK = FIELD_LIMIT - 1
_FIELD_TYPE = "I" if array("I").itemsize == 4 else "L"
assert array(_FIELD_TYPE).itemsize == 4

Sketch = dict[int, int]


def encode(sketch: Sketch, *, packed: bool = False) -> str:
    """The shorter form, or the packed one when ``packed`` (the hourly tier's: what long
    windows read, so it is what must merge fast)."""
    bins = [(i, c) for i, c in sketch.items() if c]
    if not bins:
        return ""
    low = min(i for i, _ in bins)
    high = max(i for i, _ in bins)
    sparse_length = sum(len(str(i)) + len(str(c)) + 2 for i, c in bins)
    if (packed or (high - low + 1) * _HEX_PER_FIELD + 5 < sparse_length) and max(
        c for _, c in bins
    ) < FIELD_LIMIT:
        number = 0
        for index, count in bins:
            number |= count << ((index - low) * FIELD_BITS)
        return f"{low}:{number:x}"
    return ",".join(f"{i}={c}" for i, c in sorted(bins))


def decode(text: str) -> Sketch:
    if not text:
        return {}
    out: Sketch = {}
    if ":" in text:
        low_text, _, digits = text.partition(":")
        low = int(low_text)
        for offset, count in enumerate(_fields(int(digits, 16))):
            if count:
                out[low + offset] = count
        return out
    for item in text.split(","):
        index_text, _, count_text = item.partition("=")
        index = int(index_text)
        out[index] = out.get(index, 0) + int(count_text)
    return out


def _fields(packed: int) -> array[int]:
    """The bins of a packed integer, lowest first (read in C, not shifted one by one)."""
    width = (packed.bit_length() + FIELD_BITS - 1) // FIELD_BITS
    fields = array(_FIELD_TYPE)
    fields.frombytes(packed.to_bytes(width * (FIELD_BITS // 8), sys.byteorder))
    if sys.byteorder == "big":  # each field's bytes are in order, the fields reversed
        fields.reverse()
    return fields


def merge(into: Sketch, other: Sketch) -> Sketch:
    for index, count in other.items():
        into[index] = into.get(index, 0) + count
    return into


def from_pairs(pairs: Iterable[Iterable[int]]) -> Sketch:
    out: Sketch = {}
    for index, count in pairs:
        out[index] = out.get(index, 0) + count
    return out


def of_values(values: Iterable[float]) -> Sketch:
    out: Sketch = {}
    for value in values:
        index = sketch_index(value)
        out[index] = out.get(index, 0) + 1
    return out


def from_legacy_buckets(buckets: list[int]) -> Sketch:
    """An older node's 12-bucket latency histogram as a sketch: each bucket's requests at
    its upper bound (the last, unbounded one at twice the last bound). Percentiles of such
    rows are as coarse as the buckets were."""
    bounds = [*LEGACY_BUCKETS_MS, LEGACY_BUCKETS_MS[-1] * 2]
    out: Sketch = {}
    for bound, count in zip(bounds, buckets, strict=True):
        if count:
            index = sketch_index(bound)
            out[index] = out.get(index, 0) + count
    return out


class Accumulator:
    """Adds stored sketches up, in C as far as Python allows: packed ones as integers
    (while no bin can overflow its field), sparse ones as text, counted at the end with a
    ``Counter`` over their ``bin=count`` tokens (most are ``bin=1`` in a minute's rollup, so
    there are few distinct tokens)."""

    __slots__ = ("packed", "pending", "sparse", "texts", "total")

    def __init__(self) -> None:
        self.packed = 0
        #: packed sketches added up by their lowest bin, not shifted yet: shifting each one
        #: into place makes an integer the size of the whole range per row (measured: two
        #: thirds of a day's merge); sketches of one route mostly start at a few bins
        self.pending: dict[str, int] = {}
        self.sparse: Sketch = {}
        self.texts: list[str] = []
        self.total = 0  # values added in packed form

    def add_joined(self, joined: str, count: int) -> None:
        """Sketches joined by ``;`` (the database's ``group_concat``) holding ``count``
        values in all."""
        exact = self.total + count < FIELD_LIMIT
        pending = self.pending
        for text in joined.split(";"):
            if not text:
                continue
            if ":" not in text:
                self.texts.append(text)
            elif exact:
                low_text, _, digits = text.partition(":")
                if len(digits) & 1:
                    digits = "0" + digits
                # twice as fast as int(digits, 16) (measured on 1.4 kB sketches)
                number = _from_bytes(_from_hex(digits), "big")
                pending[low_text] = pending.get(low_text, 0) + number
            else:
                merge(self.sparse, decode(text))
        if exact:
            self.total += count

    def _fold(self) -> None:
        for low_text, number in self.pending.items():
            self.packed += number << (int(low_text) * FIELD_BITS)
        self.pending.clear()

    def merge(self, other: Accumulator) -> None:
        self._fold()
        other._fold()
        if self.total + other.total < FIELD_LIMIT:
            self.packed += other.packed
            self.total += other.total
        else:
            for index, count in enumerate(_fields(other.packed)):
                if count:
                    self.sparse[index] = self.sparse.get(index, 0) + count
        merge(self.sparse, other.sparse)
        self.texts.extend(other.texts)

    def sketch(self) -> Sketch:
        self._fold()
        out = dict(self.sparse)
        for index, count in enumerate(_fields(self.packed)):
            if count:
                out[index] = out.get(index, 0) + count
        if self.texts:
            for token, times in Counter(",".join(self.texts).split(",")).items():
                index_text, _, count_text = token.partition("=")
                index = int(index_text)
                out[index] = out.get(index, 0) + int(count_text) * times
        return out


def quantile(sketch: Sketch, q: float) -> float | None:
    """The value at rank ``q`` (0..1) as DDSketch reads it: the bin holding the
    ``floor(q * (n - 1))``-th smallest value (0-based), at its representative value."""
    total = sum(sketch.values())
    if total <= 0:
        return None
    rank = int(q * (total - 1))
    seen = 0
    for index in sorted(sketch):
        seen += sketch[index]
        if seen > rank:
            return sketch_value(min(index, SKETCH_MAX_INDEX))
    return sketch_value(max(sketch))
