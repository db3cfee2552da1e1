"""The console's browser tests: a real ``portico serve`` (its console built by ``make web``)
and Debian's chromium driven by Playwright, headless, on loopback only.

One ``portico serve`` and one browser per module (starting them is most of a test's time on
a busy machine); each test has its own browser context (its own session storage: signed
out) and names what it creates after itself, so that tests sharing the server do not see
each other's data where it matters (an environment, a widget's filters, a search).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from portico.core.settings import Settings
from tests.conftest import DatabaseTemplate, report_artifact
from tests.e2e.test_gateway import echo_backend
from tests.support.browser import chromium
from tests.support.portico_process import OWNER, OWNER_PASSWORD, bootstrapped_serve

# a page's data arrives over HTTP from a server sharing two cores with the browser
expect.set_options(timeout=15_000)


@dataclass(frozen=True)
class Console:
    control: str
    env: dict[str, str]
    database_url: str
    #: what `portico serve` printed and logged
    log: Path

    @property
    def url(self) -> str:
        return f"{self.control}/console/"

    @property
    def gateway(self) -> str:
        return f"http://{self.env['PORTICO_GATEWAY_LISTEN']}"

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


@pytest.fixture(scope="module")
def console(
    db_template: DatabaseTemplate, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Console]:
    built = Settings(_env_file=None).console_dir  # type: ignore[call-arg]
    assert (built / "index.html").is_file(), f"the console is not built at {built}: make web"
    tmp_path = tmp_path_factory.mktemp("console")
    database_url = db_template.new_url(tmp_path)
    try:
        # the embedded gateway ships its traffic's analytics often: the charts have data soon
        with bootstrapped_serve(
            database_url, tmp_path, PORTICO_TELEMETRY_INTERVAL_SECONDS="0.3"
        ) as (env, _):
            yield Console(
                control=f"http://{env['PORTICO_LISTEN']}",
                env=env,
                database_url=database_url,
                log=tmp_path / "serve.log",
            )
    finally:
        db_template.drop(database_url)


@pytest.fixture(scope="module")
def echo() -> Iterator[int]:
    """A backend on loopback answering with what it received (tests.e2e.test_gateway.Echo)."""
    with echo_backend() as port:
        yield port


@pytest.fixture(scope="module")
def browser(console: Console) -> Iterator[Browser]:
    """After ``console`` (the store's fixtures run their own loop): ``support/browser.py``."""
    with chromium() as launched:
        yield launched


_OUTCOME = pytest.StashKey[pytest.TestReport]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Iterator[None]:
    report: pytest.TestReport = yield
    if report.when == "call":
        item.stash[_OUTCOME] = report
    return report


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest, screenshots: Path) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(20_000)
    yield opened
    outcome = request.node.stash.get(_OUTCOME, None)
    if outcome is not None and outcome.failed:  # what the page showed when the test failed
        screenshot(opened, screenshots, f"failed {request.node.name}")
    context.close()


@pytest.fixture(scope="session")
def screenshots(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests leave pictures of the main pages for a reviewer (never committed):
    ``PORTICO_CONSOLE_SCREENSHOTS``, else one directory of this run's temporary files (the
    same for every xdist worker); the run prints it at its end."""
    chosen = os.environ.get("PORTICO_CONSOLE_SCREENSHOTS")
    run = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:  # each worker's is popen-gwN in the run's
        run = run.parent
    directory = Path(chosen) if chosen else run / "console-screenshots"
    directory.mkdir(parents=True, exist_ok=True)
    report_artifact(request.config, "console screenshots", str(directory))
    return directory


def screenshot(page: Page, directory: Path, name: str) -> None:
    """The whole page as it is now, as ``<name>.png``: taken in a window as tall as the page
    (a full-page capture of a shorter window draws the fixed header in its middle)."""
    page.wait_for_load_state("networkidle", timeout=5_000)
    viewport = page.viewport_size or {"width": 1400, "height": 900}
    height = int(page.evaluate("document.documentElement.scrollHeight"))
    page.set_viewport_size({"width": viewport["width"], "height": max(height, viewport["height"])})
    try:
        page.screenshot(path=directory / f"{re.sub(r'[^a-z0-9-]+', '-', name.lower())}.png")
    finally:
        page.set_viewport_size(viewport)
