"""edge-auth, the seed product's edge tokens (its issue's performance section):

* ``edge-auth-jwt``: validate with jwt-auth (a Bearer token checked on every request)
  measured against the same routes with key-auth, not against no plugins: goal 0.8 of
  key-auth's throughput, same run;
* ``edge-auth-token``: the token endpoint issuing a JWT per request to a client
  authenticating with HTTP Basic: goal 2,000 tokens/s (the ratio printed is against the bare
  gateway proxying, for scale only).

The bench app (``bench/gateway/portico_node.py``) holds the edge-auth client and a key-auth
key; no server of their own.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Iterator
from pathlib import Path

from bench_plugins import Case, Setup
from portico_node import CLIENT_ID, CLIENT_SECRET, KEY

from portico.gateway.plugins.edge_auth.tokens import Signer

SIGNING_SECRET = "bench-edge-signing-secret-" + "0123456789" * 3
#: a token valid for a day from the start of 2030: the bench's runs are on the wall clock
TOKEN = Signer(SIGNING_SECRET.encode(), "HS256").issue(
    {"iat": 1_893_456_000, "exp": 4_102_444_800, "sub": CLIENT_ID, "jti": "bench"}
)


def _edge(**config: object) -> dict[str, object]:
    return {"name": "edge-auth", "scope": "route", "order": 105, "config": config}


KEY_AUTH = Setup(
    attach=[{"name": "key-auth", "scope": "route", "order": 100, "config": {}}],
    headers={"apikey": KEY},
)
VALIDATE = Setup(
    attach=[_edge(mode="validate", signing_secret=SIGNING_SECRET)],
    headers={"Authorization": f"Bearer {TOKEN}"},
)
ISSUE = Setup(
    attach=[_edge(mode="generate", signing_secret=SIGNING_SECRET, token_ttl=3600)],
    method="POST",
    headers={
        "Authorization": "Basic "
        + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
    },
)


@contextlib.contextmanager
def _validating(work: Path) -> Iterator[Setup]:
    yield VALIDATE


@contextlib.contextmanager
def _issuing(work: Path) -> Iterator[Setup]:
    yield ISSUE


CASES = [
    Case("edge-auth-jwt", 0.8, _validating, reference=KEY_AUTH),
    Case("edge-auth-token", 0.0, _issuing, rate_goal=2000),
]
