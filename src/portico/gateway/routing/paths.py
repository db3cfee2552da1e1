"""Request path normalisation, done once per request BEFORE route matching and before any
plugin (uri-blocker) looks at the path, so that no spelling of a path gets around a route's
prefix or a blocking rule.

:func:`normalize_path` maps every spelling of a path to one canonical form:

* ``%XX`` escapes of unreserved characters (``A-Z a-z 0-9 - . _ ~``) are decoded — ``%2E``
  included, so ``/%2e%2e/`` is a dot segment; every other escape keeps its octet and gets
  upper-case hex (``%2f`` → ``%2F``). ``%2F`` stays encoded: it is data, not a separator.
* ``"<>^`{|}`` and raw octets above 0x7F, which are not allowed raw in a URI, are
  percent-encoded, so a raw UTF-8 ``/café`` and ``/caf%C3%A9`` are one path. The input is
  the request-target's path as the server reads it off the wire: decoded as latin-1, one
  character per octet (``http/server.py`` does so), still percent-encoded — never an already
  decoded path such as ASGI's ``scope["path"]``. A character above U+00FF cannot be an octet
  and is refused.
* runs of ``/`` are merged; ``.`` and ``..`` segments are resolved as RFC 3986 §5.2.4 does
  (``/a/b/..`` → ``/a/``); a trailing slash is kept (``/a/`` stays ``/a/``).

Refused with :class:`PathRejected` (the caller answers 400), because each is either invalid
or only ever sent to confuse a parser somewhere along the chain:

* anything not starting with ``/`` (``*``, ``""``, absolute-form targets);
* ``..`` climbing above the root — an attack signal, not something to clamp silently;
* control characters (C0, DEL and C1), raw or percent-encoded (``%00``, ``%0A``, ``%C2%85``,
  raw octets ``C2 85``);
* raw space, ``\\``, ``?`` and ``#`` (the query must have been split off; some servers
  treat ``\\`` as ``/``);
* invalid escapes (``%zz``, a truncated ``%4``);
* octets (percent-encoded or raw) that are not UTF-8 — including overlong forms such as
  ``%C0%AE`` (a ``.`` in disguise) and a lone ``%FF``;
* a ``.``/``..`` segment carrying ``;`` parameters (``..;/``, ``.;x``), which Java servlet
  containers resolve as dot segments behind the gateway's back.

The result is ASCII, idempotent (``normalize_path(normalize_path(p)) == normalize_path(p)``)
and has no empty segment but a trailing one and no ``.``/``..`` segment. A path made only of
characters allowed raw, with no ``%``, ``//`` or ``/.``, is returned as is (the common case:
a few C-level scans).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import unquote_to_bytes

__all__ = ["PathRejected", "canonical_segment", "normalize_path"]


class PathRejected(ValueError):
    """The request path is malformed or hostile: the caller answers 400."""


_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
#: allowed raw in a segment (RFC 3986 pchar without pct-encoded)
_PCHAR: Final = "".join(sorted(_UNRESERVED)) + "!$&'()*+,;=:@"
#: a path made only of these (no '%') may take the fast path
_FAST: Final = _PCHAR + "/"
#: a path made only of them: ``re`` tests each character against a bitmap, where
#: ``str.strip(_FAST)`` searched the 79 characters for each one (measured: 2,000 instructions
#: a path against 1,000)
_FAST_PATH: Final = re.compile("[" + re.escape(_FAST) + "]*")
#: (its bound method, kept as a Final alias: see CONVENTIONS.md "Compiled modules")
_FAST_PATH_MATCH: Final = _FAST_PATH.fullmatch
_HEX: Final = frozenset("0123456789abcdefABCDEF")
#: not allowed raw in a URI, harmless: percent-encoded
_ENCODED_RAW: Final = frozenset('"<>^`{|}')
#: control characters (C0, DEL, C1), looked for in the percent-decoded path
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def normalize_path(raw: str) -> str:
    """The canonical form of the request path ``raw``; :class:`PathRejected` if it has none."""
    if (
        raw.startswith("/")
        and "//" not in raw
        and "/." not in raw
        and _FAST_PATH_MATCH(raw) is not None
    ):
        return raw  # only raw pchars and '/', no escape, no empty or dot segment
    if raw[:1] != "/":
        raise PathRejected("the path must start with '/'")
    text = _canonical_escapes(raw)
    segments: list[str] = []
    trailing = False
    for segment in text.split("/")[1:]:
        if segment == "" or segment == ".":
            trailing = True  # '//' merged; '/a/.' is '/a/'
        elif segment == "..":
            if not segments:
                raise PathRejected("the path climbs above the root")
            segments.pop()
            trailing = True  # '/a/b/..' is '/a/'
        else:
            if segment[0] == "." and segment.partition(";")[0] in (".", ".."):
                raise PathRejected("dot segment with ';' parameters")
            segments.append(segment)
            trailing = False
    if not segments:
        return "/"
    return "/" + "/".join(segments) + ("/" if trailing else "")


def canonical_segment(segment: str) -> str:
    """One path segment (no '/') with its escapes in canonical form, as :func:`normalize_path`
    writes them: what a route's static segment is compared in. No dot-segment handling."""
    if "/" in segment:
        raise PathRejected("a segment cannot hold '/'")
    if "%" not in segment and not segment.strip(_PCHAR):
        return segment
    return _canonical_escapes(segment)


def _canonical_escapes(raw: str) -> str:
    """``raw`` with unreserved escapes decoded, others upper-cased, characters not allowed raw
    encoded; refused if it holds a control character, an invalid escape or non-UTF-8."""
    pieces = raw.split("%")
    out = [_literal(pieces[0])]
    for piece in pieces[1:]:
        if len(piece) < 2 or piece[0] not in _HEX or piece[1] not in _HEX:
            raise PathRejected("invalid percent-escape")
        char = chr(int(piece[:2], 16))
        out.append(char if char in _UNRESERVED else "%" + piece[:2].upper())
        out.append(_literal(piece[2:]))
    text = "".join(out)
    if "%" in text:
        try:
            decoded = unquote_to_bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise PathRejected("the octets of the path are not UTF-8") from None
        if _CONTROL.search(decoded):
            raise PathRejected("control character in the path")
    return text


def _literal(text: str) -> str:
    """Characters between escapes: pchars and '/' kept, the harmless rest and raw octets
    above 0x7F encoded."""
    if not text.strip(_FAST):
        return text
    out: list[str] = []
    for char in text:
        if char in _FAST:
            out.append(char)
        elif char in _ENCODED_RAW or "\x80" <= char <= "\xff":
            out.append(f"%{ord(char):02X}")  # checked as UTF-8 with the escapes
        elif char > "\xff":
            raise PathRejected("a character of the path is not an octet (latin-1)")
        elif char < " " or char == "\x7f":
            raise PathRejected("control character in the path")
        else:  # space, '\\', '?', '#'
            raise PathRejected(f"character {char!r} is not allowed in a path")
    return "".join(out)
