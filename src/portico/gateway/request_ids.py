"""The ids the gateway gives requests that come without a usable one of their own."""

from __future__ import annotations

import os
from typing import Final


class RequestIds:
    """Random request ids (32 hex digits) drawn from the kernel's generator 256 at a time: one
    getrandom() system call per request cost more than the rest of making the id."""

    __slots__ = ("_at", "_text")

    BATCH: Final = 256

    def __init__(self) -> None:
        self._text = ""  # (filled on first use: a process forked before then draws its own)
        self._at = 0

    def next(self) -> str:
        at = self._at
        if at >= len(self._text):
            self._text = os.urandom(16 * self.BATCH).hex()
            at = 0
        self._at = at + 32
        return self._text[at : at + 32]
