"""Waiting for something to happen without hoping a fixed sleep was long enough."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable

import pytest

Predicate = Callable[[], object] | Callable[[], Awaitable[object]]


async def eventually(
    predicate: Predicate,
    timeout: float = 10.0,  # noqa: ASYNC109 - a deadline for polling, not a cancellation
    *,
    interval: float = 0.01,
    what: str = "",
) -> None:
    """Poll ``predicate`` (a plain function or a coroutine function) until it returns
    something true; fail the test, naming what was awaited, if it has not by ``timeout``
    seconds of loop time. The deadline is generous: it bounds a failing test, it is not what
    is tested (tests never assert on elapsed time)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = predicate()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        if loop.time() >= deadline:
            name = what or getattr(predicate, "__qualname__", repr(predicate))
            pytest.fail(f"still not true after {timeout} s: {name}")
        await asyncio.sleep(interval)
