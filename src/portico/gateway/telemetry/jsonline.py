"""JSON texts written straight from a logger's values: the reference implementation.

A logger writes one entry per request (``log_entry.EntryEncoder``). Building dicts for orjson
and encoding them cost ~18,000 instructions a request (callgrind), most of a logger's cost;
this module writes the entry from a template instead: fixed pieces of JSON, ready-made, with
the request's values between them, each encoded by its type. ``jsonline.c`` is the same
module in C, compiled with the gateway's hot modules (``scripts/build_native.py``) and found
first while the build is current (``portico.native``); this file is what runs otherwise, and
what the C module is tested against (``tests/gateway/test_jsonline.py``: the same bytes for
the same input). Strings are escaped as orjson escapes them (``"``, ``\\``, control
characters; everything else as UTF-8), floats written as ``repr`` writes them.

Headers become a JSON object as APISIX logs them: lower-case name → value, or → a list of the
values when a name repeats (first occurrence's place), and a credential's value replaced by
``"[REDACTED]"``. Which names are credentials is the caller's to say (``Verdicts``): this
module only asks, and only for names it has not been told about.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final, Protocol

from portico.gateway.telemetry import recordbatch

REDACTED = "[REDACTED]"
#: the values of :meth:`EntryBatch.add` that stand for the request's and the answer's headers
REQUEST_HEADERS: Final = object()
RESPONSE_HEADERS: Final = object()

_quote = json.encoder.encode_basestring  # the C function: non-ASCII kept, as orjson does


class Verdicts(Protocol):
    """What decides which header names are credentials (``log_entry.Redaction``)."""

    def secret(self, name: str) -> bool:
        """Whether ``name`` (lower-cased) is a credential; remembered in the dict given
        beside it."""
        ...

    def wire_name(self, raw: bytes) -> tuple[str, bool]:
        """A node's header name as it came: its lower-cased name and whether it is a
        credential (the :class:`WireNames` given beside it remembers the answer)."""
        ...


class WireNames:
    """What :func:`lines_object` learnt of a node's header names as they came on the wire:
    raw bytes → (lower-cased name, whether it is a credential), at most ``limit`` of them
    (the names are the node's: bounded all the same). The C module's is a table of its own
    (hashing the raw bytes of every header of every answer for a dict was most of the cost of
    a relayed head); this one is a dict."""

    __slots__ = ("known", "limit")

    def __init__(self, limit: int) -> None:
        if not 0 <= limit <= 2**29:
            raise ValueError("limit out of range")
        self.known: dict[bytes, tuple[str, bool]] = {}
        self.limit = limit

    def __len__(self) -> int:
        return len(self.known)


def _value(value: object) -> str:
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, tuple):
        if not all(isinstance(part, str) for part in value):
            raise TypeError("a tuple to write must hold strings")
        return _quote("".join(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value and value not in (_INF, -_INF) else "null"
    raise TypeError(f"cannot write a {type(value).__name__} as JSON")


_INF = float("inf")


def render(pieces: Sequence[bytes], values: Sequence[object]) -> bytes:
    """``pieces[0] + values[0] + pieces[1] + ... + values[-1] + pieces[-1]``, each value
    written as JSON by its type (``bytes``: a JSON text already, copied as it is; a tuple of
    strings: one JSON string of them all, which spares the caller joining them)."""
    if len(pieces) != len(values) + 1:
        raise ValueError("render needs one piece more than values")
    out = [pieces[0]]
    for value, piece in zip(values, pieces[1:], strict=True):
        out.append(value if isinstance(value, bytes) else _value(value).encode())
        out.append(piece)
    return b"".join(out)


def _write(pairs: list[tuple[str, str]]) -> bytes:
    """``pairs`` (already redacted) as a JSON object, repeated names grouped in lists."""
    grouped: dict[str, list[str]] = {}
    for name, value in pairs:
        grouped.setdefault(name, []).append(value)
    if not grouped:
        return b"{}"
    parts = []
    for name, found in grouped.items():
        written = _quote(found[0]) if len(found) == 1 else f"[{','.join(map(_quote, found))}]"
        parts.append(f"{_quote(name)}:{written}")
    return ("{" + ",".join(parts) + "}").encode()


def _redacted(
    pairs: list[tuple[str, str]], verdicts: dict[str, bool], asker: Verdicts
) -> list[tuple[str, str]]:
    out = []
    for name, value in pairs:
        secret = verdicts.get(name)
        if secret is None:
            secret = asker.secret(name)
        out.append((name, REDACTED if secret else value))
    return out


def pairs_object(pairs: list[tuple[str, str]], verdicts: dict[str, bool], asker: Verdicts) -> bytes:
    """Headers given as (lower-case name, value) pairs, as a JSON object; ``verdicts``: the
    names already judged (``asker.secret`` judges the others)."""
    return _write(_redacted(pairs, verdicts, asker))


def lines_object(
    lines: list[bytes],
    wire: WireNames,
    verdicts: dict[str, bool],
    asker: Verdicts,
    added: list[tuple[str, str]] | None,
    tag: tuple[str, str] | None,
) -> bytes:
    """A head relayed as it came, as a JSON object: the node's header lines (name, ``": "``,
    value, CRLF, as ``Connection.lines`` keeps them; values latin-1), then ``added`` (the
    headers a plugin set), then ``tag`` (the request id's header, if sent). ``wire``: the
    node's names already met (``asker.wire_name`` reads the others; ``wire`` keeps them)."""
    if len(lines) % 4:
        raise ValueError("lines come four to a header")
    pairs: list[tuple[str, str]] = []
    for i in range(0, len(lines), 4):
        raw = lines[i]
        known = wire.known.get(raw)
        if known is None:
            known = asker.wire_name(raw)
            if not isinstance(known, tuple) or len(known) != 2 or not isinstance(known[0], str):
                raise TypeError("wire_name must give (str, bool)")
            if len(wire.known) < wire.limit:
                wire.known[raw] = known
        name, secret = known
        pairs.append((name, REDACTED if secret else lines[i + 2].decode("latin-1")))
    if added:
        pairs.extend(_redacted(added, verdicts, asker))
    if tag is not None:
        if not isinstance(tag, tuple) or len(tag) != 2:
            raise TypeError("tag must be a (name, value) tuple or None")
        pairs.extend(_redacted([tag], verdicts, asker))
    return _write(pairs)


def stamped_lines(lines: list[bytes], logged_at: list[float]) -> bytes:
    """Each line (a UTF-8 JSON text, as the encoder writes entries) as a JSON string beside
    its time in nanoseconds since the epoch (``int(seconds * 1e9)``, as a JSON string), as
    JSON arrays joined by commas: ``["1700000000000000000","{\\"request\\":...}"],...``
    (the values of a Loki stream: aggregator-logger's push, written in one call where
    orjson needed each line decoded and each stamp formatted first)."""
    if len(lines) != len(logged_at):
        raise ValueError("lines and logged_at must have the same length")
    out = []
    for line, at in zip(lines, logged_at, strict=True):
        if not isinstance(line, bytes):
            raise TypeError("lines must be bytes")
        nanos = at * 1_000_000_000
        if not -9.2e18 < nanos < 9.2e18:
            raise ValueError("a time out of range")
        out.append(f'["{int(nanos)}",{_quote(line.decode())}]')
    return ",".join(out).encode()


class EntryBatch:
    """A logger's batch: its entries, joined by ``between`` (a sink's separator: ``b","``
    for a JSON array, ``b"\\n"`` for lines). The C module's writes each entry straight into
    one buffer, so that an entry is no object of its own and the batch's body is that buffer
    (:meth:`view`, sent without a copy); ``expected`` (the batch's likely size) lets it
    reserve room for the whole batch once the first entry's size is known. ``escaped``: each
    entry is written as the content of a JSON string (its pieces given escaped so, as
    ``json.encoder.encode_basestring`` escapes), which :meth:`stamped` takes as it is
    (aggregator-logger's entries are strings in Loki's push). This one keeps a list of
    bytes."""

    __slots__ = ("_at", "_between", "_escaped", "_lines")

    def __init__(self, between: bytes, expected: int = 0, escaped: bool = False) -> None:
        if not isinstance(between, bytes):
            raise TypeError("between must be bytes")
        self._between = between
        self._escaped = escaped
        self._lines: list[bytes] = []
        self._at: list[float] = []

    def __len__(self) -> int:
        return len(self._lines)

    def add(
        self,
        pieces: tuple[bytes, ...],
        logged_at: float,
        verdicts: dict[str, bool],
        asker: Verdicts,
        request: list[tuple[str, str]],
        response: list[tuple[str, str]] | None,
        lines: list[bytes] | None,
        wire: WireNames,
        added: list[tuple[str, str]] | None,
        tag: tuple[str, str] | None,
        *values: object,
    ) -> int:
        """Write one entry: ``render(pieces, values)``, where :data:`REQUEST_HEADERS` is
        written as ``pairs_object(request, ...)`` and :data:`RESPONSE_HEADERS` as
        ``pairs_object(response, ...)`` if ``response`` is not None, else as
        ``lines_object(lines, wire, ..., added, tag)`` if ``lines`` is not None, else
        ``{}``. The bytes it added (its separator included); on an error, nothing."""
        if not isinstance(pieces, tuple) or len(pieces) != len(values) + 1:
            raise ValueError("pieces must be a tuple of one piece more than values")
        if self._escaped:  # the entry as it would be, then escaped whole
            pieces = tuple(json.loads(b'"' + piece + b'"').encode() for piece in pieces)
        at = float(logged_at)
        written: list[object] = []
        for value in values:
            if value is REQUEST_HEADERS:
                value = pairs_object(request, verdicts, asker)
            elif value is RESPONSE_HEADERS:
                if response is not None:
                    value = pairs_object(response, verdicts, asker)
                elif lines is not None:
                    value = lines_object(lines, wire, verdicts, asker, added, tag)
                else:
                    value = b"{}"
            written.append(value)
        line = render(pieces, written)
        if self._escaped:
            line = _quote(line.decode())[1:-1].encode()
        added_bytes = len(line) + (len(self._between) if self._lines else 0)
        self._lines.append(line)
        self._at.append(at)
        return added_bytes

    def view(self) -> memoryview:
        """The entries joined by ``between`` (the C module's: its buffer, not copied)."""
        return memoryview(self._between.join(self._lines))

    def lines(self) -> list[bytes]:
        """Each entry."""
        return list(self._lines)

    def logged_at(self) -> list[float]:
        """When each entry was logged (epoch seconds)."""
        return list(self._at)

    def record_extent(self, key: bytes | None, start: int, max_bytes: int) -> tuple[int, int]:
        """``recordbatch.extent`` of the entries (as written: escaped if ``escaped``):
        ``(size, end)`` of the Kafka record batch of entries ``start`` to ``end``."""
        return recordbatch.extent(self._lines, self._at, key, start, max_bytes)

    def record_batch(self, prefix: bytes, key: bytes | None, start: int, end: int) -> bytes:
        """``recordbatch.encode`` of the entries: ``prefix``, then the record batch of
        entries ``start`` to ``end``, in one bytes object."""
        return recordbatch.encode(self._lines, self._at, key, start, end, prefix)

    def stamped(self) -> bytes:
        """``stamped_lines(self.lines(), self.logged_at())`` (the lines escaped already if
        ``escaped``: taken as they are)."""
        if not self._escaped:
            return stamped_lines(self._lines, self._at)
        lines = [json.loads(b'"' + line + b'"').encode() for line in self._lines]
        return stamped_lines(lines, self._at)
