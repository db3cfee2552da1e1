"""The batch processor behind every logger: APISIX's batch-processor semantics.

A logger's log phase adds its entry to the open batch (:meth:`Batcher.accepting`, then
:meth:`Batcher.added`; :meth:`BatchProcessor.push` for a batch that is a list), which only
appends to memory: it never waits, never raises and never does I/O, so a slow or dead sink
cannot slow a request down. What a batch is, is the caller's: a list of entries
(:class:`BatchProcessor`), or the loggers' ``jsonline.EntryBatch``, one buffer their entries
are written into. One background task per processor seals the open batch when it holds
``batch_max_size`` entries, when ``inactive_timeout`` seconds passed without a new entry, or
when its oldest entry is ``buffer_duration`` seconds old, and sends sealed batches one at a
time (a sink sees at most one request in flight per logger configuration). A failed send is
retried ``max_retry_count`` times, ``retry_delay`` seconds apart; then the batch is dropped
and its entries are counted (``portico_log_entries_dropped_total``).

Memory is bounded: past :data:`MAX_PENDING_ENTRIES` entries (or one full batch, if bigger) or
:data:`MAX_PENDING_BYTES` bytes waiting (the entry that crosses it is the last kept), new
entries are dropped and counted — a sink that is
down costs counted losses, not the gateway's memory.

Processors are shared resources (``services.shared("batch", <config hash>, ...)``): a deploy
that keeps a logger's configuration keeps its half-full batch; :meth:`aclose` (called once no
configuration uses it any more, or at shutdown) sends what is pending, once, within
``close_grace`` seconds, and counts what it could not send.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Final, Generic, Protocol, TypeVar


class Batch(Protocol):
    """What a processor needs of a batch: how many entries it holds."""

    def __len__(self) -> int: ...


B = TypeVar("B", bound=Batch)
T = TypeVar("T")

#: the processor's clock: monotonic, and the one the gateway times requests with, so that a
#: logger tells :meth:`Batcher.added` the time it already read (a Final alias: see
#: CONVENTIONS.md "Compiled modules")
_clock: Final = time.perf_counter

logger = logging.getLogger("portico.gateway.batch")

#: (not Final: read once per processor, and a test lowers it)
MAX_PENDING_ENTRIES = 10_000
MAX_PENDING_BYTES: Final = 64 * 1024 * 1024
#: at most one warning per processor per this many seconds (a dead sink must not flood logs)
WARN_INTERVAL: Final = 60.0


class BatchSettings(Protocol):
    """What a processor reads of a logger's configuration (``plugins._batching.BatchingConfig``,
    where the fields are documented)."""

    @property
    def batch_max_size(self) -> int: ...

    @property
    def inactive_timeout(self) -> int: ...

    @property
    def buffer_duration(self) -> int: ...

    @property
    def max_retry_count(self) -> int: ...

    @property
    def retry_delay(self) -> int: ...


class BatchFailed(Exception):
    """A failed send whose reason is worth logging (the sink answered an error status, the
    egress guard refused it). The message is logged: it must not hold secrets. Any other
    exception counts as a failure too, logged by its type only (its text may hold a URL)."""


class Batcher(Generic[B]):
    """The processor over batches of type ``B``, made by ``new_batch``: an entry is added
    to :meth:`accepting`'s batch, then told with :meth:`added`."""

    def __init__(
        self,
        name: str,
        config: BatchSettings,
        send: Callable[[B], Awaitable[None]],
        new_batch: Callable[[], B],
        *,
        dropped: Callable[[int], None] | None = None,
        close_grace: float = 5.0,
    ) -> None:
        self.name = name
        self._send = send
        self._new_batch = new_batch
        self._dropped = dropped
        self._close_grace = close_grace
        self._max_size = config.batch_max_size
        self._inactive = float(config.inactive_timeout)
        self._buffer = float(config.buffer_duration)
        self._retries = config.max_retry_count
        self._retry_delay = float(config.retry_delay)
        self._max_entries = max(MAX_PENDING_ENTRIES, config.batch_max_size)
        self._batch: B = new_batch()
        self._batch_bytes = 0
        self._first = 0.0  # (``_clock``) time of the open batch's oldest entry
        self._last = 0.0  # ... and of its newest
        self._ready: deque[tuple[B, int]] = deque()  # sealed: (entries, bytes)
        self.pending = 0  # entries accepted and neither sent nor dropped
        self.pending_bytes = 0
        self.sent = 0  # entries delivered (for tests and status)
        self.dropped = 0  # entries dropped
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._warned_at = -WARN_INTERVAL
        self._unwarned = 0

    # ------------------------------------------------------------------ the log phase

    def accepting(self) -> B | None:
        """The batch to add one entry to, then :meth:`added`; None if the entry must be
        dropped (it is counted): the processor is closed or too much waits. Never blocks,
        never raises."""
        if self._closed:
            self._drop(1, "the logger was reconfigured or stopped")
            return None
        if self.pending >= self._max_entries or self.pending_bytes >= MAX_PENDING_BYTES:
            if len(self._batch):  # make room as soon as the sink allows
                self._seal()
                self._kick()
            self._drop(1, "too many entries waiting for the sink")
            return None
        return self._batch

    def added(self, size: int, now: float) -> None:
        """An entry of ``size`` bytes was added to :meth:`accepting`'s batch, at ``now``
        (``time.perf_counter()``: a time the caller read anyway)."""
        count = len(self._batch)
        if count == 1:
            self._first = now
        self._last = now
        self._batch_bytes += size
        self.pending += 1
        self.pending_bytes += size
        if count >= self._max_size:
            self._seal()
            self._kick()
        elif count == 1:  # the runner must start timing the new batch
            self._kick()

    # ------------------------------------------------------------------ the runner

    def _seal(self) -> None:
        self._ready.append((self._batch, self._batch_bytes))
        self._batch, self._batch_bytes = self._new_batch(), 0

    def _kick(self) -> None:
        if self._task is None or self._task.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a unit test pushing from sync code): sent later
                return
            self._task = loop.create_task(self._run(), name=f"batch:{self.name}")
        self._wake.set()

    async def _run(self) -> None:
        while True:
            if self._ready:
                entries, size = self._ready.popleft()
                await self._deliver(entries, size)
                continue
            if len(self._batch):
                delay = min(self._last + self._inactive, self._first + self._buffer)
                delay -= _clock()
                if delay <= 0 or self._closed:
                    self._seal()
                    continue
            elif self._closed:
                return
            else:
                delay = None
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)

    async def _deliver(self, entries: B, size: int) -> None:
        attempts = 0
        while True:
            attempts += 1
            try:
                await self._send(entries)
            except asyncio.CancelledError:
                self._settle(len(entries), size)
                self._drop(len(entries), "stopped while sending")
                raise
            except BatchFailed as error:
                reason = str(error)
            except Exception as failure:  # a transport error; its text may hold the sink's URL
                reason = type(failure).__name__
            else:
                self._settle(len(entries), size)
                self.sent += len(entries)
                return
            if attempts > self._retries or self._closed:
                break
            await asyncio.sleep(self._retry_delay)
        self._settle(len(entries), size)
        self._drop(len(entries), f"{reason} (after {attempts} attempt(s))")

    def _settle(self, count: int, size: int) -> None:
        self.pending -= count
        self.pending_bytes -= size

    def _drop(self, count: int, reason: str) -> None:
        self.dropped += count
        if self._dropped is not None:
            self._dropped(count)
        self._unwarned += count
        now = _clock()
        if now - self._warned_at >= WARN_INTERVAL:
            logger.warning("%s: dropped %d log entries: %s", self.name, self._unwarned, reason)
            self._warned_at, self._unwarned = now, 0

    # ------------------------------------------------------------------ lifecycle

    async def aclose(self) -> None:
        """Send what is pending (one attempt per batch, no retries) within ``close_grace``
        seconds; count the rest as dropped."""
        if self._closed:
            return
        self._closed = True
        if len(self._batch):
            self._seal()
        if not self._ready and (self._task is None or self._task.done()):
            return
        self._kick()
        task = self._task
        if task is None:
            return
        done, _ = await asyncio.wait({task}, timeout=self._close_grace)
        if not done:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.pending:  # sealed batches the runner never reached
            self._drop(self.pending, "not sent before the logger stopped")
            self._ready.clear()
            self.pending = self.pending_bytes = 0


class BatchProcessor(Batcher[list[T]]):
    """A processor whose batches are lists of entries (trace-export's spans)."""

    def __init__(
        self,
        name: str,
        config: BatchSettings,
        send: Callable[[list[T]], Awaitable[None]],
        *,
        dropped: Callable[[int], None] | None = None,
        close_grace: float = 5.0,
    ) -> None:
        super().__init__(name, config, send, list, dropped=dropped, close_grace=close_grace)

    def push(self, entry: T, size: int = 0) -> None:
        """Queue ``entry``, which holds ``size`` bytes (for the memory bound); never blocks,
        never raises (an entry that does not fit is dropped and counted)."""
        batch = self.accepting()
        if batch is not None:
            batch.append(entry)
            self.added(size, _clock())
