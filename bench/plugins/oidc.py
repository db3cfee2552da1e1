"""openid-connect (bearer_only): every request carries a valid RS256 access token, verified
against the provider's keys, cached after the first request (the goal is for the warm cache).

The provider is the tests' real one (``tests/support/oidcprovider.py``: discovery and JWKS
over HTTP on loopback), with the wall clock, since the gateway under test runs its own."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from bench_plugins import Case, Setup

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: tests.support

from tests.support.oidcprovider import OidcProvider


@contextlib.contextmanager
def _provider(work: Path) -> Iterator[Setup]:
    with OidcProvider(now=time.time) as provider:
        provider.access_lifetime = 3600  # outlives the run
        config = {
            "client_id": provider.client_id,
            "discovery": provider.discovery,
            "bearer_only": True,
        }
        plugin = {"name": "openid-connect", "scope": "route", "order": 103, "config": config}
        yield Setup(attach=[plugin], headers={"Authorization": f"Bearer {provider.token()}"})


CASES = [Case("openid-connect", 0.8, _provider)]
