"""Raw HTTP/1.1 response heads, taken apart into lines for assertions: a test asserts on a
header's value, never on a substring of the whole head (which holds random request ids)."""

from __future__ import annotations

Header = tuple[str, str]


def parse_head(raw: bytes) -> tuple[int, list[Header]]:
    """The status and the (name, value) header lines of a response head, in order, names and
    values as they were written (the value without the blank after the colon)."""
    text = raw.decode("latin-1")
    status_line, _, rest = text.partition("\r\n")
    headers: list[Header] = []
    for line in rest.split("\r\n"):
        if not line:
            continue
        name, colon, value = line.partition(":")
        assert colon, f"not a header line: {line!r}"
        headers.append((name, value.lstrip(" \t")))
    return int(status_line.split(" ", 2)[1]), headers


def values(headers: list[Header], name: str) -> list[str]:
    """The values of every line named ``name`` (any case), in order."""
    wanted = name.lower()
    return [value for found, value in headers if found.lower() == wanted]


def names(headers: list[Header]) -> list[str]:
    """Every header name, lower-cased, in order."""
    return [found.lower() for found, _ in headers]
