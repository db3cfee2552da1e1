"""Bearer tokens already verified, so that a client sending the same token again costs a dict
lookup instead of a signature check (PyJWT's RS256 decode is some hundreds of microseconds a
request, most of the gateway's budget: bench/plugins/oidc.py measured 0.35 of the plain
gateway's throughput without this cache).

An entry is used only while it would still verify: within the token's ``exp``/``nbf`` (with
the leeway), against the same expectations (issuer, audience, algorithms) and the same
generation of the provider's key set, so a key the provider withdraws takes its tokens with
it at the next fetch. Keyed by the whole token: the exact bytes that were verified.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from portico.gateway.plugins.openid_connect.tokens import LEEWAY, Expectations

#: tokens remembered per route; the oldest goes first when full
CAPACITY = 4096


class Verified:
    __slots__ = ("claims", "expect", "expires", "generation", "not_before", "userinfo")

    def __init__(self, claims: dict[str, Any], expect: Expectations, generation: int) -> None:
        self.claims = claims
        self.expect = expect
        self.generation = generation
        self.expires = float(claims["exp"]) + LEEWAY
        nbf = claims.get("nbf")
        self.not_before = float(nbf) - LEEWAY if nbf is not None else float("-inf")
        #: X-Userinfo's value, encoded once
        self.userinfo = base64.b64encode(
            json.dumps(claims, separators=(",", ":")).encode()
        ).decode()


class TokenCache:
    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[str, Verified] = {}

    def get(self, token: str, expect: Expectations, generation: int, now: float) -> Verified | None:
        entry = self._entries.get(token)
        if entry is None:
            return None
        if (
            entry.generation != generation
            or entry.expect is not expect
            or not entry.not_before <= now < entry.expires
        ):
            del self._entries[token]
            return None
        return entry

    def put(self, token: str, entry: Verified) -> None:
        entries = self._entries
        if len(entries) >= CAPACITY:
            del entries[next(iter(entries))]
        entries[token] = entry
