"""Wakes the long-polls of this process when an environment gets a new config version.

Other control-plane replicas learn of a change by polling the store (see the config
endpoint), so a replica never depends on this; it only makes the local case immediate.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Callable


class ConfigNotifier:
    def __init__(self) -> None:
        self._events: dict[uuid.UUID, asyncio.Event] = {}
        self._subscribers: list[Callable[[], None]] = []
        self._waiting: Counter[uuid.UUID] = Counter()

    def publish(self, env_id: uuid.UUID) -> None:
        event = self._events.pop(env_id, None)
        if event is not None:
            event.set()
        for subscriber in list(self._subscribers):
            subscriber()

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Be told of every publish (of any environment): the embedded gateway's feeder."""
        self._subscribers.append(callback)

    def unsubscribe(self, callback: Callable[[], None]) -> None:
        if callback in self._subscribers:
            self._subscribers.remove(callback)

    async def wait(self, env_id: uuid.UUID, timeout: float) -> bool:  # noqa: ASYNC109
        """Wait for the next publish of ``env_id``, at most ``timeout`` seconds."""
        event = self._events.get(env_id)
        if event is None or event.is_set():
            event = self._events[env_id] = asyncio.Event()
        self._waiting[env_id] += 1
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            return False
        finally:
            self._waiting[env_id] -= 1
            if not self._waiting[env_id]:
                del self._waiting[env_id]
        return True

    def waiting(self, env_id: uuid.UUID) -> int:
        """How many long-polls wait for ``env_id`` now (what a test waits for before it
        publishes, to see one woken)."""
        return self._waiting[env_id]


NOTIFIER = ConfigNotifier()
