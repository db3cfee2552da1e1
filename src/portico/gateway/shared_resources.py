"""Objects plugin runtimes keep across configuration swaps: log batches waiting to be sent,
cache stores, Redis connections, metric families.

A plugin asks for a resource by kind and key (usually a hash of the part of its config that
defines the resource); the same key gets the same object in the next snapshot, so a deploy
does not drop a half-full log batch or empty a cache. Resources that no environment's
configuration asked for in its latest build are closed after the swap.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

logger = logging.getLogger("portico.gateway.resources")


class Resource(Protocol):
    async def aclose(self) -> None: ...


R = TypeVar("R", bound=Resource)


class SharedResources:
    def __init__(self) -> None:
        self._live: dict[tuple[str, str], Any] = {}
        self._users: dict[str, set[tuple[str, str]]] = {}  # environment → keys it uses
        self._building: dict[str, set[tuple[str, str]]] = {}

    def get(self, env_id: str, kind: str, key: str, factory: Callable[[], R]) -> R:
        ident = (kind, key)
        self._building.setdefault(env_id, set()).add(ident)
        found = self._live.get(ident)
        if found is None:
            found = self._live[ident] = factory()
        return found

    def commit(self, env_id: str) -> None:
        """The environment's new configuration is in service: it uses what it asked for."""
        self._users[env_id] = self._building.pop(env_id, set())

    def abandon(self, env_id: str) -> None:
        """The build failed: what it asked for stays only if someone else uses it."""
        self._building.pop(env_id, None)

    def forget(self, env_id: str) -> None:
        self._users.pop(env_id, None)

    async def collect(self) -> None:
        """Close resources no environment uses any more."""
        used = set().union(*self._users.values(), *self._building.values())
        for ident in [i for i in self._live if i not in used]:
            resource = self._live.pop(ident)
            with contextlib.suppress(Exception):
                await resource.aclose()

    async def aclose(self) -> None:
        self._users.clear()
        self._building.clear()
        await self.collect()
