"""What an upstream exchange and those who drive it agree on: its timeouts, and the listener a
callback-driven exchange reports to (``upstream_conn.Connection.send``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timeouts:
    connect: float = 60.0
    send: float = 60.0  # between two successful writes of the request
    read: float = 60.0  # between two successful reads of the response


class Listener:
    """Who hears of a callback-driven exchange (a base class, not a ``Protocol``: compiled,
    ``on_upstream`` is then a direct call)."""

    __slots__ = ()

    def on_upstream(self) -> None:
        """The head is in (``head_done``; ``done`` if the body came with it), or the exchange
        failed (``error``): called once, after the read that brought it was parsed."""
        raise NotImplementedError
