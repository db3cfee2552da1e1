"""Waiting for something to happen without hoping a fixed sleep was long enough.

A test that waits for a condition (a server up, a message delivered, a worker idle, a
connection closed) polls it with :func:`eventually` (in a coroutine) or
:func:`eventually_sync` (in plain code, e.g. around a subprocess), never ``sleep(n)`` and
hope. The timeout bounds a failing test; it is not what is tested (tests never assert on
elapsed time). A sleep that stays in a test is part of the behaviour under test (a backend
that answers late, a client that trickles, a window that must pass) and says so.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

import pytest

Predicate = Callable[[], object] | Callable[[], Awaitable[object]]


def _describe(predicate: Callable[..., object], what: str | Callable[[], str]) -> str:
    """What was awaited: ``what`` if given (called, if it is a function: the state at the
    timeout), else the predicate's name, or a lambda's source."""
    if callable(what):
        return what()
    if what:
        return what
    name = getattr(predicate, "__qualname__", repr(predicate))
    if name.endswith("<lambda>"):
        try:
            return inspect.getsource(predicate).strip()
        except (OSError, TypeError):
            pass
    return name


async def eventually(
    predicate: Predicate,
    timeout: float = 10.0,  # noqa: ASYNC109 - a deadline for polling, not a cancellation
    *,
    interval: float = 0.01,
    what: str | Callable[[], str] = "",
    ignoring: tuple[type[Exception], ...] = (),
) -> None:
    """Poll ``predicate`` (a plain function or a coroutine function) until it returns
    something true; fail the test, naming what was awaited, if it has not by ``timeout``
    seconds of loop time. An exception of ``ignoring`` raised by the predicate counts as
    "not yet" (a server not listening yet); any other fails the test at once."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            result = predicate()
            if inspect.isawaitable(result):
                result = await result
        except ignoring:
            result = False
        if result:
            return
        if loop.time() >= deadline:
            pytest.fail(f"still not true after {timeout} s: {_describe(predicate, what)}")
        await asyncio.sleep(interval)


def eventually_sync(
    predicate: Callable[[], object],
    timeout: float = 10.0,
    *,
    interval: float = 0.02,
    what: str | Callable[[], str] = "",
    ignoring: tuple[type[Exception], ...] = (),
) -> None:
    """:func:`eventually` for code that is not a coroutine (it blocks the thread while it
    polls): fixtures that start a thread or a process and wait for it to answer."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = predicate()
        except ignoring:
            result = False
        if result:
            return
        if time.monotonic() >= deadline:
            pytest.fail(f"still not true after {timeout} s: {_describe(predicate, what)}")
        time.sleep(interval)
