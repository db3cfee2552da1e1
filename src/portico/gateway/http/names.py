"""Header names as they arrive on the wire → their lower-cased ``str``.

A dict lookup on the raw bytes saves the decode and ``lower()`` for the names nearly every
message carries; other names fall back to ``name.decode("latin-1").lower()``.
"""

from __future__ import annotations

from typing import Final

_COMMON = (
    # requests
    "host user-agent accept accept-encoding accept-language connection content-length "
    "content-type transfer-encoding cookie authorization referer origin cache-control pragma "
    "x-forwarded-for x-forwarded-proto x-forwarded-host x-real-ip x-request-id apikey "
    "if-none-match if-modified-since upgrade expect te keep-alive range sec-websocket-key "
    "sec-websocket-version sec-websocket-extensions sec-websocket-protocol "
    # responses
    "date server etag last-modified location set-cookie vary expires content-encoding "
    "accept-ranges age sec-websocket-accept access-control-allow-origin"
)

HEADER_NAMES: Final[dict[bytes, str]] = {}
for _name in _COMMON.split(" "):
    for _spelling in (_name, "-".join(p.capitalize() for p in _name.split("-")), _name.upper()):
        HEADER_NAMES[_spelling.encode()] = _name
HEADER_NAMES[b"User-agent"] = "user-agent"
HEADER_NAMES[b"ETag"] = "etag"
HEADER_NAMES[b"WWW-Authenticate"] = "www-authenticate"

#: headers of one connection, never passed on by a proxy (RFC 9110 §7.6.1), and the ones the
#: engine re-frames itself
HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "proxy-authorization",
        "proxy-authenticate",
    }
)
#: Connection values that name no other header (the usual ones): no token to look for
_PLAIN_CONNECTION: Final = frozenset(
    {"keep-alive", "close", "upgrade", "Keep-Alive", "Close", "Upgrade"}
)


def connection_tokens(value: str | None) -> frozenset[str] | None:
    """The header names a Connection header ``value`` lists beyond the hop-by-hop ones (they
    are dropped with it), or None when it names none."""
    if value is None or value in _PLAIN_CONNECTION:
        return None
    tokens = frozenset(token.strip() for token in value.lower().split(",")) - HOP_BY_HOP
    tokens -= {""}
    return tokens or None
