"""The HMAC JWTs edge-auth issues and checks (RFC 7519 with RFC 7515's compact form), written
here rather than through a JWT library: the plugin accepts one configured algorithm, one key,
and a handful of claims, and the token endpoint and every validated request pay only for
that (see bench/bench_plugins.py)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
from typing import Any, Final

_HASHES: Final = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}
#: three base64url segments (no padding), as RFC 7515 §7.1 writes them
_COMPACT: Final = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
_compact: Final = _COMPACT.fullmatch
_compare: Final = hmac.compare_digest
_hmac_digest: Final = hmac.digest
_DECODER: Final = json.JSONDecoder()
_ENCODE: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True).encode


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def header_segment(algorithm: str) -> str:
    """The header edge-auth writes: ``{"alg":"<algorithm>","typ":"JWT"}``, encoded."""
    return b64url(_ENCODE({"alg": algorithm, "typ": "JWT"}).encode())


class Signer:
    """Issues and checks tokens of one algorithm and key."""

    __slots__ = ("algorithm", "digest", "header", "key")

    def __init__(self, key: bytes, algorithm: str) -> None:
        self.key = key
        self.algorithm = algorithm
        self.digest = _HASHES[algorithm]
        self.header = header_segment(algorithm)

    def issue(self, claims: dict[str, Any]) -> str:
        signing_input = self.header + "." + b64url(_ENCODE(claims).encode())
        signature = _hmac_digest(self.key, signing_input.encode("ascii"), self.digest)
        return signing_input + "." + b64url(signature)

    def verify(self, token: str, now: float) -> dict[str, Any] | None:
        """The claims of ``token`` when it is signed by this key with this algorithm (its
        header says so: no other algorithm, never ``none``), carries an ``exp`` still ahead
        of ``now`` and an ``nbf`` (if any) behind it; None otherwise."""
        if len(token) > 8192 or not _compact(token):
            return None
        header, payload, signature = token.split(".")
        if header != self.header and not self._header_allows(header):
            return None
        try:
            given = _unb64url(signature)
        except (binascii.Error, ValueError):
            return None
        signing_input = (header + "." + payload).encode("ascii")
        if not _compare(_hmac_digest(self.key, signing_input, self.digest), given):
            return None
        try:
            claims = _DECODER.decode(_unb64url(payload).decode("utf-8"))
        except (binascii.Error, ValueError, RecursionError):
            return None
        if not isinstance(claims, dict):
            return None
        exp = claims.get("exp")
        if exp is None or not _numeric(exp) or now >= exp:  # RFC 7519 §4.1.4: they expire
            return None
        nbf = claims.get("nbf")
        if nbf is not None and (not _numeric(nbf) or now < nbf):  # RFC 7519 §4.1.5
            return None
        return claims

    def _header_allows(self, segment: str) -> bool:
        """A header written otherwise than edge-auth writes it (another issuer's key order,
        spacing): its ``alg`` must still be the configured one, its ``typ`` JWT if given, and
        it may ask for no extension it does not understand (``crit``)."""
        try:
            header = _DECODER.decode(_unb64url(segment).decode("utf-8"))
        except (binascii.Error, ValueError, RecursionError):
            return False
        if not isinstance(header, dict) or header.get("alg") != self.algorithm:
            return False
        typ = header.get("typ")
        if typ is not None and (not isinstance(typ, str) or typ.upper() != "JWT"):
            return False
        return "crit" not in header


def _numeric(value: Any) -> bool:
    # JSON allows NaN and Infinity through Python's parser: neither is a NumericDate
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
