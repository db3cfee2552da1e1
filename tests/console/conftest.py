"""The console's browser tests: a real ``portico serve`` (its console built by ``make web``)
and Debian's chromium driven by Playwright, headless, on loopback only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from portico.core.settings import Settings
from tests.support.browser import chromium
from tests.support.portico_process import OWNER, OWNER_PASSWORD, bootstrapped_serve

# a page's data arrives over HTTP from a server sharing two cores with the browser
expect.set_options(timeout=15_000)


@dataclass(frozen=True)
class Console:
    control: str
    env: dict[str, str]

    @property
    def url(self) -> str:
        return f"{self.control}/console/"

    @contextmanager
    def management(self) -> Iterator[httpx.Client]:
        """A client of the management API signed in as the owner, based at its
        organisation."""
        with httpx.Client(base_url=self.control, timeout=15) as client:
            login = {"email": OWNER, "password": OWNER_PASSWORD}
            answer = client.post("/api/auth/login", json=login)
            assert answer.status_code == 200, answer.text
            client.headers["Authorization"] = f"Bearer {answer.json()['token']}"
            org = client.get("/api/me").json()["orgs"][0]["id"]
            client.base_url = httpx.URL(f"{self.control}/api/orgs/{org}")
            yield client


@pytest.fixture
def console(database_url: str, tmp_path: Path) -> Iterator[Console]:
    built = Settings(_env_file=None).console_dir  # type: ignore[call-arg]
    assert (built / "index.html").is_file(), f"the console is not built at {built}: make web"
    # the embedded gateway ships its traffic's analytics often: the charts have data soon
    with bootstrapped_serve(database_url, tmp_path, PORTICO_TELEMETRY_INTERVAL_SECONDS="0.3") as (
        env,
        _,
    ):
        yield Console(control=f"http://{env['PORTICO_LISTEN']}", env=env)


@pytest.fixture
def browser(console: Console) -> Iterator[Browser]:
    """After ``console`` (the store's fixtures run their own loop): ``support/browser.py``."""
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(20_000)
    yield opened
    context.close()
