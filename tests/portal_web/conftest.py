"""The developer portal's browser tests: ONE real ``portico serve`` for the module (its portal
built by ``make web``), set up once as an operator and a marketplace administrator would,
and Debian's chromium driven by Playwright, headless, on loopback only.

What the module's serve holds, made through the public APIs only:
- on the management side, the API ``orders`` imported from an OpenAPI document whose root
  asks for key-auth and product-quota, deployed on the environment serving ``HOST`` to an
  echo backend, and a service account with the Integration role;
- in the marketplace, a connection to that management service, ``orders`` imported through
  it and published to everyone (so that an approved subscription admits the app's key on
  the embedded gateway); ``Stock levels``, an API written in the portal, published to
  signed-in developers only; and ``Shop essentials``, a product of ``orders``, public.
Each test registers its own developer (the tests share the serve, in any order).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from portico.core.settings import Settings
from tests.e2e.test_admin_api import Portico
from tests.e2e.test_catalogue import connect_to_itself, management, marketplace_admin, ok
from tests.e2e.test_gateway import HOST, echo_backend
from tests.support.browser import chromium
from tests.support.management_calls import integration_token
from tests.support.portico_process import bootstrapped_serve

if TYPE_CHECKING:
    from tests.conftest import DatabaseTemplate

# a page's data arrives over HTTP from a server sharing two cores with the browser
expect.set_options(timeout=15_000)

#: what ``orders`` is imported from: its routes, and the plugins of its service
ORDERS = {
    "openapi": "3.0.3",
    "info": {"title": "orders", "version": "2.1.0", "description": "Orders of the shop."},
    "x-portico": {"plugins": {"key-auth": {}, "product-quota": {}}},
    "paths": {
        "/orders": {
            "get": {
                "operationId": "listOrders",
                "summary": "List the orders",
                "responses": {"200": {"description": "The orders, newest first."}},
            }
        }
    },
}
STOCK = {
    "openapi": "3.0.3",
    "info": {"title": "Stock levels", "version": "1.0.0"},
    "paths": {
        "/stock/{sku}": {
            "get": {
                "operationId": "getStock",
                "summary": "Read the stock of an article",
                "parameters": [
                    {"name": "sku", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"200": {"description": "Units in stock."}},
            }
        }
    },
}


@dataclass(frozen=True)
class PortalSite:
    """The module's serve, with what the setup made there."""

    portico: Portico
    #: the marketplace's administrator (the bootstrap owner), signed in once for the module
    admin: httpx.Client
    #: marketplace node ids: ``orders`` (imported, public), ``stock`` (internal),
    #: ``essentials`` (a product of orders, public)
    nodes: dict[str, str]
    screenshots: Path
    #: the serve's store (SQLite), for what no public API writes (a partner organisation)
    database_url: str

    @property
    def url(self) -> str:
        return f"{self.portico.control}/portal/"

    @property
    def gateway(self) -> str:
        return f"http://{self.portico.env['PORTICO_GATEWAY_LISTEN']}"

    def screenshot(self, page: Page, name: str) -> None:
        page.screenshot(path=self.screenshots / f"{name}.png", full_page=True)


def publish(admin: httpx.Client, node: str, visibility: str) -> None:
    for transition in ("submit_for_review", "publish"):
        report = ok(
            admin.post("/publishing/transitions", json={"nodes": [node], "transition": transition})
        )
        assert report["meta"]["failed"] == [], report
    report = ok(
        admin.post("/publishing/visibility", json={"nodes": [node], "visibility": visibility})
    )
    assert report["meta"]["failed"] == [], report


def _deploy_orders(portico: Portico, backend: int) -> tuple[str, str]:
    """``orders`` from its document, live behind ``HOST``; the organisation and the
    Integration token for the marketplace."""
    cp, org = management(portico)
    try:
        cp.base_url = httpx.URL(f"{portico.control}/api/orgs/{org}")
        env = ok(cp.post("/envs", json={"name": "shop", "gatewayHosts": [HOST]}), 201)
        node = {"host": "127.0.0.1", "port": backend}
        upstream = ok(
            cp.post(
                f"/envs/{env['id']}/upstreams",
                json={"name": "echo", "specification": {"nodes": [node]}},
            ),
            201,
        )
        imported = ok(cp.post("/apis/from-spec", json={"spec": ORDERS}), 201)
        revision = f"/apis/{imported['api']['id']}/revisions/{imported['revision']['id']}"
        binding = {"environmentId": env["id"], "upstreamId": upstream["id"]}
        ok(cp.patch(f"{revision}/upstream-bindings/add", json={"environmentUpstreams": [binding]}))
        ok(cp.post(f"{revision}/deploy", json={"environmentId": env["id"]}), 200, 201)
        return imported["api"]["id"], integration_token(cp)
    finally:
        cp.close()


def _catalogue(portico: Portico, admin: httpx.Client, org_api: str, token: str) -> dict[str, str]:
    """The marketplace's side: ``orders`` imported and public, ``Stock levels`` internal,
    ``Shop essentials`` public; their node ids by short name."""
    cp, org = management(portico)
    cp.close()
    connection = connect_to_itself(admin, portico, org, token)
    imported = admin.post(
        f"/gateways/connections/{connection['id']}/apis/import", json={"api_id": org_api}
    )
    orders = ok(imported, 201)["data"]["id"]
    stock = {
        "title": "Stock levels",
        "version": "1.0.0",
        "overview": "Units in stock, per article.",
        "documentation": STOCK,
    }
    essentials = {
        "title": "Shop essentials",
        "description": "What every shop front needs.",
        "associated_apis": [orders],
        "quota": {"limit": 1000, "interval": 1, "interval_unit": "day"},
    }
    nodes = {
        "orders": orders,
        "stock": ok(admin.post("/apis", json=stock), 201)["data"]["id"],
        "essentials": ok(admin.post("/products", json=essentials), 201)["data"]["id"],
    }
    for name, visibility in (("orders", "public"), ("stock", "internal"), ("essentials", "public")):
        publish(admin, nodes[name], visibility)
    return nodes


@pytest.fixture(scope="module")
def site(
    db_template: DatabaseTemplate,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[PortalSite]:
    if db_template.backend == "postgresql":
        # the pages call the same HTTP API over either store, and its tests run on both: the
        # browser runs once, under SQLite, to keep the suite's time
        pytest.skip("the browser tests run under --db=sqlite only")
    built = Settings(_env_file=None).portal_dir  # type: ignore[call-arg]
    assert (built / "index.html").is_file(), f"the portal is not built at {built}: make web"
    tmp_path = tmp_path_factory.mktemp("portal-site")
    database_url = db_template.new_url(tmp_path)
    # a reviewer may keep the pictures elsewhere (a gitignored folder): PORTICO_SCREENSHOT_DIR
    screenshots = Path(os.environ.get("PORTICO_SCREENSHOT_DIR") or tmp_path / "screenshots")
    screenshots.mkdir(parents=True, exist_ok=True)
    settings = {
        # the embedded gateway ships its traffic's analytics often: the chart has data soon
        "PORTICO_TELEMETRY_INTERVAL_SECONDS": "0.3",
        # provisioning an approved subscription is the worker's: it looks often
        "PORTICO_WORKER_POLL_SECONDS": "0.2",
    }
    try:
        with (
            echo_backend() as backend,
            bootstrapped_serve(database_url, tmp_path, **settings) as (
                env,
                _,
            ),
        ):
            portico = Portico(
                env=env, control=f"http://{env['PORTICO_LISTEN']}", log=tmp_path / "serve.log"
            )
            org_api, token = _deploy_orders(portico, backend)
            with closing(marketplace_admin(portico)) as admin:
                nodes = _catalogue(portico, admin, org_api, token)
                yield PortalSite(
                    portico=portico,
                    admin=admin,
                    nodes=nodes,
                    screenshots=screenshots,
                    database_url=database_url,
                )
    finally:
        db_template.drop(database_url)
        reporter: Any = request.config.pluginmanager.get_plugin("terminalreporter")
        capture: Any = request.config.pluginmanager.get_plugin("capturemanager")
        if reporter is not None and capture is not None:  # no reporter in an xdist worker
            with capture.global_and_fixture_disabled():
                reporter.write_line(f"\nportal screenshots: {screenshots}")


@pytest.fixture(scope="module")
def browser(site: PortalSite) -> Iterator[Browser]:
    """After the module's serve (the store's fixtures run their own loop)."""
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser, site: PortalSite) -> Iterator[Page]:
    """A fresh tab (no session) that may use the clipboard, as a developer copying a key."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.portico.control)
    opened = context.new_page()
    opened.set_default_timeout(20_000)
    yield opened
    context.close()
