"""``eventually`` and ``eventually_sync``: they return once the predicate holds, and fail
the test naming what was awaited when it does not."""

from __future__ import annotations

import pytest

from tests.support.waiting import eventually, eventually_sync


class Countdown:
    """True from the ``n``-th call on."""

    def __init__(self, n: int) -> None:
        self.left = n

    def __call__(self) -> bool:
        self.left -= 1
        return self.left <= 0


async def test_eventually_returns_once_the_predicate_holds() -> None:
    ready = Countdown(3)
    await eventually(ready, interval=0)
    assert ready.left == 0


async def test_eventually_awaits_a_coroutine_predicate() -> None:
    ready = Countdown(2)

    async def check() -> bool:
        return ready()

    await eventually(check, interval=0)
    assert ready.left == 0


async def test_eventually_fails_naming_what_was_awaited() -> None:
    never: list[int] = []
    with pytest.raises(pytest.fail.Exception, match=r"still not true after 0.05 s: .*never"):
        await eventually(lambda: never, 0.05)
    with pytest.raises(pytest.fail.Exception, match="the queue to fill, 0 in it"):
        await eventually(lambda: never, 0.05, what=lambda: f"the queue to fill, {len(never)} in it")


async def test_eventually_counts_an_ignored_error_as_not_yet() -> None:
    calls = Countdown(3)

    def flaky() -> bool:
        if not calls():
            raise ConnectionError("not listening yet")
        return True

    await eventually(flaky, interval=0, ignoring=(ConnectionError,))
    with pytest.raises(ZeroDivisionError):
        await eventually(lambda: 1 / 0, ignoring=(ConnectionError,))


def test_eventually_sync_polls_and_fails_alike() -> None:
    ready = Countdown(3)
    eventually_sync(ready, interval=0)
    assert ready.left == 0
    with pytest.raises(pytest.fail.Exception, match="the server to answer"):
        eventually_sync(lambda: False, 0.05, what="the server to answer")
