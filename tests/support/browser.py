"""Debian's chromium driven by Playwright's synchronous API, headless, for the browser tests
of the web front ends (``tests/console``, ``tests/portal_web``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright

#: chromium as the machine has it; its flags keep it off the network it cannot reach
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium() -> Iterator[Browser]:
    """A launched chromium while the block runs. Playwright's synchronous API keeps its event
    loop running in this thread while it is open: start it after (and stop it before) the
    fixtures that run their own loop to set the store up and tear it down."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS
        )
        try:
            yield launched
        finally:
            launched.close()
