"""Discovery's share of the event loop: at most :data:`TURN_SECONDS` of its work in one turn
of the loop, whatever the number of upstreams, answers or nodes.

Everything discovery does on the loop is cut into *steps* of bounded work (issuing a query,
reading up to 64 records of an answer, comparing one upstream's nodes, hashing 512 points of
a consistent-hash ring, sorting one bucket of it, starting or stopping one health probe),
and every step is preceded by ``await pacer.pause()``. The pacer lets steps run while the
turn's discovery work has taken less than ``seconds`` since its first step, then has the
caller wait for a later turn (``asyncio.sleep(0)``: timers, requests and every other ready
callback run in between). The budget is shared by all the upstreams of a gateway, so a
thousand answers arriving together, or a hundred balancers rebuilt at once, are spread over
as many turns as they need. The longest stretch of discovery work in one turn is then the
budget plus one step, plus the few microseconds each in-flight query's answer costs to
arrive (at most ``CONCURRENT_RESOLUTIONS`` resolutions are in flight:
``gateway/discovery/watch.py``).

A turn starts at the first step after the previous turn ended; its end is a callback
scheduled when it starts (``call_soon``: it runs in the loop's next iteration, after the
timers and I/O callbacks of that iteration became due).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Final

__all__ = ["TURN_SECONDS", "Pacer"]

#: discovery's work in one turn of the event loop, at most (plus one step)
TURN_SECONDS: Final = 0.001


class Pacer:
    """The budget of one gateway's discovery work per turn of the event loop."""

    def __init__(
        self, seconds: float = TURN_SECONDS, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.seconds = seconds
        self._clock = clock
        #: when the current turn's first step began (None: no discovery work this turn yet)
        self._began: float | None = None
        #: steps run, and times a step had to wait for a later turn (for the bench)
        self.steps = 0
        self.waits = 0

    async def pause(self) -> None:
        """Call before each step: returns at once while this turn's budget lasts, else once a
        later turn has begun."""
        while True:
            now = self._clock()
            began = self._began
            if began is None:
                self._began = now
                asyncio.get_running_loop().call_soon(self._end_turn)
                break
            if now - began < self.seconds:
                break
            self.waits += 1
            await asyncio.sleep(0)
        self.steps += 1

    def _end_turn(self) -> None:
        self._began = None
