"""W3C Trace Context (https://www.w3.org/TR/trace-context/): reading ``traceparent``, making
the one the upstream gets, and the sampling decision."""

from __future__ import annotations

import random
import re
from typing import Final

_TRACEPARENT: Final = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_LOW_64: Final = (1 << 64) - 1
#: (a Final alias: see CONVENTIONS.md "Compiled modules")
_getrandbits: Final = random.getrandbits


class Parent:
    """What an incoming ``traceparent`` says."""

    __slots__ = ("sampled", "span_id", "trace_id")

    def __init__(self, trace_id: int, span_id: int, sampled: bool) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.sampled = sampled


def parse_traceparent(value: str | None) -> Parent | None:
    """The parent of a valid header, else None (and the gateway starts a new trace). A
    version above 00 may carry more fields after the four known ones (the spec's forward
    compatibility); version ff and all-zero ids are invalid."""
    if not value:
        return None
    value = value.strip()
    found = _TRACEPARENT.match(value)
    if found is None:
        return None
    version = found.group(1)
    if version == "ff" or (len(value) != 55 and (version == "00" or value[55:56] != "-")):
        return None
    trace_id, span_id = int(found.group(2), 16), int(found.group(3), 16)
    if not trace_id or not span_id:
        return None
    return Parent(trace_id, span_id, bool(int(found.group(4), 16) & 1))


def traceparent(trace_id: int, span_id: int, sampled: bool) -> str:
    # (pieces joined, the ids' bytes as hex: formatting big integers with a width took
    # twice as long)
    parts = ["00-", trace_id.to_bytes(16, "big").hex(), "-", span_id.to_bytes(8, "big").hex()]
    parts.append("-01" if sampled else "-00")
    return "".join(parts)


def new_id(bits: int) -> int:
    """A random non-zero id (the SDK's generator: ``random``, not a CSPRNG — ids are not
    secrets)."""
    while True:
        found = _getrandbits(bits)
        if found:
            return found


def ratio_bound(ratio: float) -> int:
    """Trace ids whose low 64 bits are below this are sampled (OpenTelemetry's
    TraceIdRatioBased: the same trace gets the same decision on every node)."""
    return round(ratio * (_LOW_64 + 1))


def sampled_by_ratio(trace_id: int, bound: int) -> bool:
    return (trace_id & _LOW_64) < bound
