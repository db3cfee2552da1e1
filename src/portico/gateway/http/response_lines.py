"""An upstream answer's headers as ``Connection.lines`` keeps them: the pieces of their wire
lines (name, ``b": "``, value, ``b"\r\n"`` for each), as llhttp checked them, relayed joined as
they came; the lengths of their names kept as bits (``name_size_bit``) so that a header
someone would set in their place is looked for only when one of that length is there.
"""

from __future__ import annotations

from .names import HEADER_NAMES


def name_size_bit(size: int) -> int:
    """The bit ``Connection.name_sizes`` sets for a header name of ``size`` bytes (61 and
    more share one: compiled, the mask stays a machine integer)."""
    return 1 << (size if size < 61 else 61)


def header_pairs(lines: list[bytes]) -> list[tuple[str, str]]:
    """``Connection.lines`` as (name lower-cased, value) pairs, for what reads them one by
    one (plugins, caches); a plain relay writes the lines as they are."""
    pairs: list[tuple[str, str]] = []
    for i in range(0, len(lines), 4):
        name = lines[i]
        value = lines[i + 2]
        key = HEADER_NAMES.get(name)
        if key is None:
            key = name.decode("latin-1").lower()
        pairs.append((key, value.decode("latin-1")))
    return pairs
