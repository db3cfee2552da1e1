"""W3C Trace Context (https://www.w3.org/TR/trace-context/): reading the client's
``traceparent``, the one the upstream gets in its trace, and the sampling bound.

Ids stay the lower-case hex text they travel as: the header is written from it, and the span
(``wire.span``) reads its bytes from the same text, so no id is ever an integer.
"""

from __future__ import annotations

import re
from typing import Final

_TRACEPARENT: Final = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_ZERO_TRACE: Final = "0" * 32
_ZERO_SPAN: Final = "0" * 16
#: (a Final alias: see CONVENTIONS.md "Compiled modules")
_match: Final = _TRACEPARENT.match


class Parent:
    """What an incoming ``traceparent`` says: its ids as hex text."""

    __slots__ = ("sampled", "span_id", "trace_id")

    def __init__(self, trace_id: str, span_id: str, sampled: bool) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.sampled = sampled


def parse_traceparent(value: str) -> Parent | None:
    """The parent of a valid header, else None (and the gateway starts a new trace). A
    version above 00 may carry more fields after the four known ones (the spec's forward
    compatibility); version ff and all-zero ids are invalid."""
    value = value.strip()
    found = _match(value)
    if found is None:
        return None
    version = found.group(1)
    if version == "ff" or (len(value) != 55 and (version == "00" or value[55:56] != "-")):
        return None
    trace_id, span_id = found.group(2), found.group(3)
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return Parent(trace_id, span_id, bool(int(found.group(4), 16) & 1))


def child_of(parent: Parent, made: str) -> str:
    """The ``traceparent`` the upstream gets in the client's trace: the parent's trace id,
    the gateway's span id (the one of ``made``, a new trace's traceparent: see
    ``wire.traceparents``), the parent's sampling decision."""
    parts = ["00-", parent.trace_id, made[35:52]]  # (made[35:52]: "-" and the span id)
    parts.append("-01" if parent.sampled else "-00")
    return "".join(parts)


def ratio_bound(ratio: float) -> int:
    """Trace ids whose low 64 bits are below this are sampled (OpenTelemetry's
    TraceIdRatioBased: the same trace gets the same decision on every node)."""
    return round(ratio * (1 << 64))
