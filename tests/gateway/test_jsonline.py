"""``telemetry.jsonline``: the C module writes the same bytes as the reference (``.py``) for
the same input, and both write valid JSON that reads back as what was given.

The C module is the one of the current native build (``make native``); where there is none
(a checkout never built), the comparisons are skipped, the reference's own checks still run.
"""

from __future__ import annotations

import json
import math
from types import ModuleType
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portico import native
from portico.gateway.telemetry import jsonline as loaded
from tests.support.c_modules import implementations

MODULE = "portico.gateway.telemetry.jsonline"


REFERENCE, C, IMPLEMENTATIONS = implementations(MODULE)

# every character, the ones JSON escapes and the edges of UTF-8 most often
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", '"', "\\", "\x00\x1f\x7f", "é", "\u2028", "😀", 'a\\"b']
)
# long runs: the C module scans sixteen bytes at a time, and an escape may sit anywhere in a
# block (or in the tail after the last whole block)
TEXT = TEXT | st.builds(
    lambda head, mark, tail: head + mark + tail,
    st.text("abcdefgh/-", max_size=40),
    st.sampled_from(['"', "\\", "\n", "\x01", "é", ""]),
    st.text("abcdefgh/-", max_size=40),
)
NAMES = st.sampled_from(["host", "accept", "cookie", "x-trace", "set-cookie", "authorization"])
NAMES = NAMES | st.text("abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12)
VALUES = st.one_of(
    TEXT,
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.none(),
    st.booleans(),
    st.lists(TEXT, max_size=4).map(tuple),  # written as one string, joined
)


class Asker:
    """A stand-in for ``log_entry.Redaction`` with its verdicts and its table of wire names
    (``module``'s own): a name is secret when it holds "cookie" or "auth"; it counts what it
    was asked."""

    def __init__(self, module: ModuleType = REFERENCE, limit: int = 512) -> None:
        self.verdicts: dict[str, bool] = {}
        self.wire = module.WireNames(limit)
        self.asked = 0
        self.asked_wire = 0

    def secret(self, name: str) -> bool:
        self.asked += 1
        verdict = "cookie" in name or "auth" in name
        self.verdicts[name] = verdict
        return verdict

    def wire_name(self, raw: bytes) -> tuple[str, bool]:
        self.asked_wire += 1
        name = raw.decode("latin-1").lower()
        return (name, self.secret(name))


def expected_object(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in pairs:
        if "cookie" in name or "auth" in name:
            value = "[REDACTED]"
        if name not in out:
            out[name] = value
        elif isinstance(out[name], list):
            out[name].append(value)
        else:
            out[name] = [out[name], value]
    return out


@settings(max_examples=300, deadline=None)
@given(values=st.lists(VALUES, max_size=8), raw=st.lists(st.sampled_from([b"{}", b"[1]"])))
def test_render_writes_each_value_as_json(values: list[object], raw: list[bytes]) -> None:
    given_values = [*values, *raw]
    pieces = [b"[", *[b"," for _ in given_values[1:]], b"]"] if given_values else [b"[]"]
    written = REFERENCE.render(pieces, given_values)
    read = json.loads(written)
    for value, back in zip(given_values, read, strict=True):
        if isinstance(value, bytes):
            assert back == json.loads(value)
        elif isinstance(value, float) and not math.isfinite(value):
            assert back is None
        elif isinstance(value, tuple):
            assert back == "".join(value)
        else:
            assert back == value
    if C is not None:
        assert C.render(pieces, given_values) == written
        assert C.render(tuple(pieces), tuple(given_values)) == written


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_render_refuses_what_json_cannot_hold(module: ModuleType) -> None:
    with pytest.raises(TypeError):
        module.render([b"", b""], [object()])
    with pytest.raises(TypeError):
        module.render([b"", b""], [("a", 1)])
    with pytest.raises(ValueError, match="one piece more"):
        module.render([b""], [1])
    assert module.render([b"a", b"b", b"c"], ["x", 2.5]) == b'a"x"b2.5c'


@settings(max_examples=300, deadline=None)
@given(pairs=st.lists(st.tuples(NAMES, TEXT), max_size=80))
def test_pairs_become_an_object_grouped_and_redacted(pairs: list[tuple[str, str]]) -> None:
    asker = Asker()
    written = REFERENCE.pairs_object(pairs, asker.verdicts, asker)
    assert json.loads(written) == expected_object(pairs)
    assert list(json.loads(written)) == list(dict.fromkeys(name for name, _ in pairs))
    if C is not None:
        c_asker = Asker()
        assert C.pairs_object(pairs, c_asker.verdicts, c_asker) == written
        assert c_asker.asked == len({name for name, _ in pairs})  # each name asked once


# header values: printable ASCII runs (written sixteen bytes at a time by the C module) with
# anything at all among them
HEADER_VALUES = st.binary(max_size=30) | st.builds(
    lambda head, mark, tail: head + mark + tail,
    st.binary(max_size=40).map(lambda raw: bytes(0x20 + b % 0x5F for b in raw)),
    st.binary(max_size=2),
    st.text("abcdefgh/-; =", max_size=40).map(str.encode),
)


@settings(max_examples=300, deadline=None)
@given(
    headers=st.lists(st.tuples(NAMES, HEADER_VALUES), max_size=70),
    added=st.none() | st.lists(st.tuples(NAMES, TEXT), max_size=4),
    tag=st.none() | st.tuples(NAMES, st.text("0123456789abcdef-", min_size=1, max_size=36)),
    limit=st.sampled_from([0, 3, 512]),
)
def test_a_relayed_head_becomes_an_object(
    headers: list[tuple[str, bytes]],
    added: list[tuple[str, str]] | None,
    tag: tuple[str, str] | None,
    limit: int,
) -> None:
    lines: list[bytes] = []
    for name, value in headers:
        lines += [name.title().encode(), b": ", value, b"\r\n"]
    asker = Asker(REFERENCE, limit)
    written = REFERENCE.lines_object(lines, asker.wire, asker.verdicts, asker, added, tag)
    pairs = [(name, value.decode("latin-1")) for name, value in headers]
    pairs += [*(added or []), *([tag] if tag else [])]
    assert json.loads(written) == expected_object(pairs)
    known = len({name.title() for name, _ in headers})
    assert len(asker.wire) == min(known, limit)
    if C is not None:
        c_asker = Asker(C, limit)
        assert C.lines_object(lines, c_asker.wire, c_asker.verdicts, c_asker, added, tag) == written
        assert len(c_asker.wire) == len(asker.wire)
        asked = c_asker.asked_wire
        # again: what the table keeps is not asked again, the rest is, the bytes the same
        assert C.lines_object(lines, c_asker.wire, c_asker.verdicts, c_asker, added, tag) == written
        if limit >= known:
            assert c_asker.asked_wire == asked


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_header_objects_refuse_malformed_input(module: ModuleType) -> None:
    asker = Asker(module)
    with pytest.raises((TypeError, ValueError)):
        module.lines_object([b"Host", b": "], asker.wire, asker.verdicts, asker, None, None)
    with pytest.raises(TypeError):
        module.lines_object([], asker.wire, asker.verdicts, asker, None, "x-request-id")
    with pytest.raises((TypeError, ValueError)):
        module.pairs_object([("host", 1)], asker.verdicts, asker)
    assert module.pairs_object([], asker.verdicts, asker) == b"{}"


def test_the_c_module_is_the_one_the_gateway_uses_when_built() -> None:
    if not native.active():
        pytest.skip("the interpreted modules run (PORTICO_NATIVE=0 or no current build)")
    assert native.compiled(loaded)


@settings(max_examples=2000, deadline=None)
@given(
    micros=st.integers(min_value=-(10**15), max_value=10**15)
    | st.sampled_from([0, 1, 999, 1000, 1001, 10**12 - 1, 10**12, 10**12 + 1])
)
def test_thousandths_are_written_as_repr_writes_them(micros: int) -> None:
    """Latencies are whole microseconds in milliseconds: the C module writes them without
    dtoa, and must still write exactly ``repr``'s text."""
    for value in (micros / 1000, -micros / 1000, micros / 1000 + 0.0005):
        written = REFERENCE.render([b"", b""], [value])
        assert written == repr(value).encode()
        if C is not None:
            assert C.render([b"", b""], [value]) == written


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_signed_zero_and_tiny_floats_keep_repr(module: ModuleType) -> None:
    for value in (-0.0, 0.0, 1e-05, 0.0001, 1e16, 123456789012.345, 5e-324):
        assert module.render([b"", b""], [value]) == repr(value).encode()


@settings(max_examples=200, deadline=None)
@given(
    entries=st.lists(
        st.dictionaries(TEXT, TEXT | st.integers(-(2**63), 2**63 - 1), max_size=4), max_size=12
    ),
    times=st.lists(st.floats(min_value=0, max_value=4e9), min_size=12, max_size=12),
)
def test_stamped_lines_are_what_orjson_writes(
    entries: list[dict[str, object]], times: list[float]
) -> None:
    """aggregator-logger's Loki values: each entry a JSON string beside its nanoseconds."""
    lines = [orjson.dumps(entry) for entry in entries]
    logged_at = times[: len(lines)]
    values = [
        [str(int(at * 1_000_000_000)), line.decode()]
        for at, line in zip(logged_at, lines, strict=True)
    ]
    expected = orjson.dumps(values)[1:-1]  # (the array's brackets are the caller's)
    assert REFERENCE.stamped_lines(lines, logged_at) == expected
    if C is not None:
        assert C.stamped_lines(lines, logged_at) == expected


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_stamped_lines_refuse_malformed_input(module: ModuleType) -> None:
    with pytest.raises(ValueError, match="same length"):
        module.stamped_lines([b"{}"], [])
    with pytest.raises(TypeError):
        module.stamped_lines(["{}"], [1.0])
    with pytest.raises(ValueError, match="out of range"):
        module.stamped_lines([b"{}"], [float("inf")])
    assert module.stamped_lines([], []) == b""
    assert (
        module.stamped_lines([b'{"a":"\\n"}'], [1.5]) == b'["1500000000","{\\"a\\":\\"\\\\n\\"}"]'
    )


# ---------------------------------------------------------------------- EntryBatch


PIECES = (b'{"a":', b',"request":', b',"b":', b',"response":', b"}")


def _escaped(text: bytes) -> bytes:
    return json.encoder.encode_basestring(text.decode())[1:-1].encode()


def _add(
    module: ModuleType, batch: Any, asker: Asker, entry: dict[str, Any], escaped: bool = False
) -> int:
    """Add ``entry`` (what ``ENTRIES`` draws) to ``batch`` as log_entry does: the request's
    headers and the answer's (pairs, wire lines or none) where their markers stand; the
    pieces escaped for an ``escaped`` batch."""
    pieces = tuple(map(_escaped, PIECES)) if escaped else PIECES
    values = (entry["a"], module.REQUEST_HEADERS, entry["b"], module.RESPONSE_HEADERS)
    lines: list[bytes] | None = None
    if entry["lines"] is not None:
        lines = []
        for name, value in entry["lines"]:
            lines += [name.title().encode(), b": ", value, b"\r\n"]
    return batch.add(
        pieces,
        entry["at"],
        asker.verdicts,
        asker,
        entry["request"],
        entry["response"],
        lines,
        asker.wire,
        entry["added"],
        entry["tag"],
        *values,
    )


ENTRIES = st.fixed_dictionaries(
    {
        "a": VALUES,
        "b": TEXT,
        "at": st.floats(min_value=0, max_value=4e9),
        "request": st.lists(st.tuples(NAMES, TEXT), max_size=6),
        "response": st.none() | st.lists(st.tuples(NAMES, TEXT), max_size=6),
        "lines": st.none() | st.lists(st.tuples(NAMES, HEADER_VALUES), max_size=6),
        "added": st.none() | st.lists(st.tuples(NAMES, TEXT), max_size=2),
        "tag": st.none() | st.tuples(NAMES, st.text("0123456789abcdef", min_size=1, max_size=8)),
    }
)


def _expected_line(module: ModuleType, entry: dict[str, Any]) -> bytes:
    """The entry as render, pairs_object and lines_object write it, one call each."""
    asker = Asker(module)
    request = module.pairs_object(entry["request"], asker.verdicts, asker)
    if entry["response"] is not None:
        response = module.pairs_object(entry["response"], asker.verdicts, asker)
    elif entry["lines"] is not None:
        lines: list[bytes] = []
        for name, value in entry["lines"]:
            lines += [name.title().encode(), b": ", value, b"\r\n"]
        response = module.lines_object(
            lines, asker.wire, asker.verdicts, asker, entry["added"], entry["tag"]
        )
    else:
        response = b"{}"
    pieces = [b'{"a":', b',"request":', b',"b":', b',"response":', b"}"]
    return module.render(pieces, [entry["a"], request, entry["b"], response])


@settings(max_examples=200, deadline=None)
@given(
    entries=st.lists(ENTRIES, max_size=6),
    between=st.sampled_from([b",", b"\n", b"", b'\n{"create":{}}\n']),
    expected=st.sampled_from([0, 1, 3, 1000]),
)
def test_an_entry_batch_holds_what_render_writes(
    entries: list[dict[str, Any]], between: bytes, expected: int
) -> None:
    written = []
    for module in (REFERENCE, C) if C is not None else (REFERENCE,):
        batch = module.EntryBatch(between, expected)
        asker = Asker(module)
        sizes = [_add(module, batch, asker, entry) for entry in entries]
        lines = [_expected_line(module, entry) for entry in entries]
        assert len(batch) == len(entries)
        assert batch.lines() == lines
        assert bytes(batch.view()) == between.join(lines)
        assert sum(sizes) == len(between.join(lines))  # what each add said it took
        assert batch.logged_at() == [float(entry["at"]) for entry in entries]
        assert batch.stamped() == module.stamped_lines(lines, batch.logged_at())
        for line in lines:
            json.loads(line)
        written.append(bytes(batch.view()))
    assert len(set(written)) == 1  # the C module's bytes are the reference's


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_a_failed_entry_leaves_nothing_behind(module: ModuleType) -> None:
    batch = module.EntryBatch(b",", 10)
    asker = Asker(module)
    entry = {
        "a": 1,
        "b": "x",
        "at": 1.5,
        "request": [("host", "h")],
        "response": None,
        "lines": None,
        "added": None,
        "tag": None,
    }
    _add(module, batch, asker, entry)
    for broken in (
        {**entry, "a": object()},  # no JSON for it
        {**entry, "b": "\ud800"},  # a lone surrogate: no UTF-8
        {**entry, "request": [("host", 1)]},
        {**entry, "lines": [("host", b"v")], "tag": "x-request-id"},
    ):
        with pytest.raises((TypeError, ValueError, UnicodeEncodeError)):
            _add(module, batch, asker, broken)
    assert batch.lines() == [_expected_line(module, entry)]
    assert bytes(batch.view()) == _expected_line(module, entry)
    assert batch.logged_at() == [1.5]
    with pytest.raises(ValueError, match="one piece more than values"):
        batch.add((b"{}",), 1.0, {}, asker, [], None, None, asker.wire, None, None, 1)


def test_a_batch_being_read_takes_no_more_entries() -> None:
    if C is None:
        pytest.skip("no current native build")
    batch = C.EntryBatch(b",")
    asker = Asker(C)
    entry = {
        "a": 1,
        "b": "x",
        "at": 1.0,
        "request": [],
        "response": None,
        "lines": None,
        "added": None,
        "tag": None,
    }
    _add(C, batch, asker, entry)
    view = batch.view()  # its buffer, not a copy: it must not move while read
    with pytest.raises(BufferError):
        _add(C, batch, asker, entry)
    view.release()
    _add(C, batch, asker, entry)
    assert len(batch) == 2


@settings(max_examples=200, deadline=None)
@given(entries=st.lists(ENTRIES, max_size=5))
def test_an_escaped_batch_holds_its_entries_as_json_strings(
    entries: list[dict[str, Any]],
) -> None:
    """aggregator-logger's batches: each entry written as the content of a JSON string, its
    pieces given escaped; stamped() then writes what a plain batch's stamped() writes."""
    written = []
    for module in (REFERENCE, C) if C is not None else (REFERENCE,):
        plain, escaped = module.EntryBatch(b""), module.EntryBatch(b"", 10, True)
        plain_asker, escaped_asker = Asker(module), Asker(module)
        for entry in entries:
            _add(module, plain, plain_asker, entry)
            _add(module, escaped, escaped_asker, entry, escaped=True)
        assert escaped.lines() == [_escaped(line) for line in plain.lines()]
        for line, original in zip(escaped.lines(), plain.lines(), strict=True):
            assert json.loads(b'"' + line + b'"') == original.decode()
        assert escaped.stamped() == plain.stamped()
        written.append(escaped.stamped())
    assert len(set(written)) == 1
