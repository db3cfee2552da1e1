"""The stored form of percentile sketches, and merging them fast enough to answer a query.

A sketch is bin → count (bins as ``portico.gateway.telemetry.rollups.sketch_index`` maps values:
1 % relative accuracy). Stored as text in one of two forms, whichever is shorter:

* sparse ``"i=c,i=c"`` — a minute's rollup of a few requests holds a few bins;
* packed ``"o:n:hex"`` — ``n`` values in the counts of bins ``o``, ``o+1``... as 16-bit
  little-endian fields in hexadecimal: an hour's rollup holds a contiguous run of bins, most
  of them small. A sketch with a bin of 65,536 or more is stored sparse.

(Rows written before these forms may hold ``"o:hex"``: 32-bit fields, bin ``o`` in the
lowest bits of one big-endian number. They are still read.)

Merging thousands of rows per query in Python one bin at a time is too slow (measured in
``bench/bench_analytics.py``). A packed sketch is instead read as one integer
(``int.from_bytes``), and adding two such integers adds every bin at once, in C, while no
16-bit field can overflow: ``Accumulator`` adds up the sketches of one lowest bin while the
values they hold stay below 65,536 (that is what ``n`` is for), then widens the sum to 64-bit
fields (byte slicing, in C) and starts again. Sparse sketches are joined as text and counted
with one ``Counter`` over their tokens.
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter
from collections.abc import Iterable

from portico.gateway.telemetry.rollups import SKETCH_MAX_INDEX, sketch_index, sketch_value

#: upper bounds (ms) of the 12-bucket latency histogram nodes sent before sketches (the
#: last bucket is unbounded)
LEGACY_BUCKETS_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
LEGACY_BUCKET_COUNT = len(LEGACY_BUCKETS_MS) + 1

_from_bytes = int.from_bytes
_from_hex = bytes.fromhex
#: the largest count a packed field holds, and the most values summed before widening
NARROW_LIMIT = (1 << 16) - 1
#: an hourly sketch starts at a multiple of it: ``Accumulator`` sums sketches by where they
#: start, and then widens and shifts each sum (measured: a day's response sizes by app started
#: at ~5,000 places, 40 % of the merge)
LOW_ALIGNMENT = 8
_WIDE_TYPE = "Q"
assert array(_WIDE_TYPE).itemsize == 8

Sketch = dict[int, int]


def encode(sketch: Sketch, *, packed: bool = False) -> str:
    """The shorter of the two forms, or the packed one when ``packed`` (the hourly tier's:
    what long windows read, so it is what must merge fast); sparse when a bin would
    overflow its field."""
    bins = sorted((i, c) for i, c in sketch.items() if c)
    if not bins:
        return ""
    low, high = bins[0][0], bins[-1][0]
    total = sum(c for _, c in bins)
    sparse_length = sum(len(str(i)) + len(str(c)) + 2 for i, c in bins)
    packed_length = (high - low + 1) * 4 + len(str(low)) + len(str(total)) + 2
    if (packed or packed_length <= sparse_length) and max(c for _, c in bins) <= NARROW_LIMIT:
        if packed:  # a few leading zeros, and a query adds up 8x fewer sums (by lowest bin)
            low -= low % LOW_ALIGNMENT
        fields = array("H", bytes(2 * (high - low + 1)))
        for index, count in bins:
            fields[index - low] = count
        if sys.byteorder == "big":
            fields.byteswap()
        return f"{low}:{total}:{fields.tobytes().hex()}"
    return ",".join(f"{i}={c}" for i, c in bins)


def decode(text: str) -> Sketch:
    if not text:
        return {}
    out: Sketch = {}
    if ":" in text:
        parts = text.split(":")
        low = int(parts[0])
        fields = _narrow_fields(parts[2]) if len(parts) == 3 else _legacy_fields(parts[1])
        for offset, count in enumerate(fields):
            if count:
                out[low + offset] = count
        return out
    for item in text.split(","):
        index_text, _, count_text = item.partition("=")
        index = int(index_text)
        out[index] = out.get(index, 0) + int(count_text)
    return out


def _narrow_fields(digits: str) -> array[int]:
    fields = array("H", _from_hex(digits))
    if sys.byteorder == "big":
        fields.byteswap()
    return fields


def _legacy_fields(digits: str) -> list[int]:
    number = int(digits, 16)
    return [(number >> (32 * i)) & 0xFFFFFFFF for i in range((number.bit_length() + 31) // 32)]


def _wide_fields(number: int) -> array[int]:
    """The 64-bit fields of ``number``, lowest first (read in C, not shifted one by one)."""
    fields = array(_WIDE_TYPE)
    fields.frombytes(number.to_bytes((number.bit_length() + 63) // 64 * 8, "little"))
    if sys.byteorder == "big":
        fields.byteswap()
    return fields


def _widen(number: int) -> int:
    """A sum of 16-bit fields as the same counts in 64-bit fields."""
    narrow = number.to_bytes((number.bit_length() + 15) // 16 * 2, "little")
    wide = bytearray(len(narrow) * 4)
    wide[0::8] = narrow[0::2]
    wide[1::8] = narrow[1::2]
    return _from_bytes(wide, "little")


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
    """Adds stored sketches up, in C as far as Python allows (see the module's docstring)."""

    __slots__ = ("held", "narrow", "sparse", "texts", "wide")

    def __init__(self) -> None:
        #: packed sketches added up by their lowest bin (as text: not parsed per row), in
        #: 16-bit fields, and the values each sum holds
        self.narrow: dict[str, int] = {}
        self.held: dict[str, int] = {}
        #: the same, widened to 64-bit fields, by lowest bin
        self.wide: dict[int, int] = {}
        self.sparse: Sketch = {}
        self.texts: list[str] = []

    def add_joined(self, joined: str) -> None:
        """Sketches joined by ``;`` (the database's ``group_concat``)."""
        if ":" not in joined:  # all sparse (minutes, mostly): counted as one text
            if joined:
                self.texts.append(joined.replace(";", ","))
            return
        narrow, held = self.narrow, self.held
        for text in joined.split(";"):
            if not text:
                continue
            parts = text.split(":")
            if len(parts) != 3:
                if parts[0] == text:
                    self.texts.append(text)
                else:  # the older 32-bit form
                    merge(self.sparse, decode(text))
                continue
            low, values, digits = parts
            count = held.get(low, 0) + int(values)
            if count > NARROW_LIMIT:
                self._widen(low)
                count = int(values)
            number = _from_bytes(_from_hex(digits), "little")
            if count > NARROW_LIMIT:  # alone too many to add another
                self.wide[int(low)] = self.wide.get(int(low), 0) + _widen(number)
                continue
            narrow[low] = narrow.get(low, 0) + number
            held[low] = count

    def freeze(self) -> None:
        """Put everything in the form ``merge`` reads, so that merging it into others
        changes nothing of it (a merge kept for later queries)."""
        self._widen_all()

    def _widen(self, low: str) -> None:
        number = self.narrow.pop(low, 0)
        self.held.pop(low, None)
        if number:
            self.wide[int(low)] = self.wide.get(int(low), 0) + _widen(number)

    def _widen_all(self) -> None:
        for low in list(self.narrow):
            self._widen(low)

    def merge(self, other: Accumulator) -> None:
        other._widen_all()
        for low, number in other.wide.items():
            self.wide[low] = self.wide.get(low, 0) + number
        merge(self.sparse, other.sparse)
        self.texts.extend(other.texts)

    def sketch(self) -> Sketch:
        self._widen_all()
        out = dict(self.sparse)
        packed = 0
        for low, number in self.wide.items():
            packed += number << (low * 64)
        for index, count in enumerate(_wide_fields(packed)):
            if count:
                out[index] = out.get(index, 0) + count
        if self.texts:
            for token, times in Counter(",".join(self.texts).split(",")).items():
                if not token:
                    continue
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
