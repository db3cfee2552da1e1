"""The life of a background loop in the control-plane process (the mailer, the jobs worker):
one task, woken early by ``wake()`` or by its poll interval, stopped gracefully."""

from __future__ import annotations

import asyncio
import contextlib


class BackgroundLoop:
    """Subclasses implement ``run()`` (loop while not ``_stopping``, wait with
    ``_sleep()``) and set ``task_name``."""

    task_name = "portico-background"

    def __init__(self) -> None:
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        #: whether the loop is waiting for its next round (between rounds, not working)
        self.idle = False

    async def run(self) -> None:
        raise NotImplementedError

    def wake(self) -> None:
        self._wake.set()

    def start(self) -> None:
        self._task = asyncio.create_task(self.run(), name=self.task_name)

    async def stop(self, grace: float = 5.0) -> None:
        """Let the work in hand finish for up to ``grace`` seconds, then cancel."""
        self._stopping = True
        self._wake.set()
        if self._task is None:
            return
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._task), grace)
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _sleep(self, seconds: float) -> None:
        """Until ``seconds`` pass or someone calls ``wake()``."""
        self.idle = True
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), seconds)
        finally:
            self.idle = False
        self._wake.clear()
