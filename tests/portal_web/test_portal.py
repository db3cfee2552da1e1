"""The developer portal in a real browser, against one real ``portico serve`` (conftest.py):
the catalogue signed out (public nodes only; the API reference's renderer not loaded for
it), an API's reference rendered from its OpenAPI document; a developer who registers, is
approved by the administrator in the web console, signs in, creates an app and sees its
key once (copied by its button), subscribes it, sees the subscription pending then active
(approved through the admin API), calls the gateway with the key and sees the usage chart
move; a rejected subscription's reason; and an organisation's API shown to its members
only.

Screenshots of the main pages are written to the module's temporary folder (its path is
printed at the end of a run without xdist), or to ``PORTICO_SCREENSHOT_DIR``.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

import httpx
import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import create_engine, insert

from portico.marketplace.organisation.models import Organisation
from tests.e2e.test_catalogue import ok
from tests.e2e.test_gateway import HOST
from tests.portal_web.conftest import PortalSite
from tests.support.portico_process import OWNER, OWNER_PASSWORD
from tests.support.waiting import eventually_sync

pytestmark = pytest.mark.e2e

PASSWORD = "a long enough passphrase"
REASON = "Stock levels are for partner shops only"


def approve_registration(site: PortalSite, email: str) -> None:
    pending = ok(site.admin.get("/users/pending"))["data"]
    [user] = [u for u in pending if u["email"] == email]
    ok(site.admin.post(f"/users/{user['id']}/approve"))


def approve_in_console(page: Page, site: PortalSite, email: str) -> None:
    """As the administrator, in the web console of the same installation (a tab of its
    own): signed in to the admin API there, the registration approved from its list."""
    console = page.context.new_page()
    console.goto(f"{site.portico.control}/console/")
    console.get_by_label("Email").fill(OWNER)
    console.get_by_role("textbox", name="Password").fill(OWNER_PASSWORD)
    console.get_by_role("button", name="Sign in", exact=True).click()
    console.get_by_role("link", name="Portal registrations").click()
    form = console.get_by_role("form", name="Sign in to the admin API")
    form.get_by_role("textbox", name="Password").fill(OWNER_PASSWORD)
    form.get_by_role("button", name="Sign in to the admin API").click()
    waiting = console.get_by_role("table", name="Registrations awaiting approval")
    waiting.get_by_role("button", name=f"Approve {email}").click()
    expect(console.get_by_role("status")).to_contain_text(f"{email} is approved")
    site.screenshot(console, "console-portal-registrations")
    console.close()


def sign_in(page: Page, site: PortalSite, email: str) -> None:
    page.goto(f"{site.url}sign-in")
    form = page.get_by_role("form", name="Sign in")
    form.get_by_label("Email").fill(email)
    form.get_by_role("textbox", name="Password").fill(PASSWORD)
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="My apps")).to_be_visible()


def subscribe(page: Page, site: PortalSite, api: str, app: str) -> None:
    """From the catalogue: the API's page, the app chosen, the request sent."""
    page.get_by_role("link", name="Catalogue").click()
    page.get_by_role("table", name="APIs").get_by_role("link", name=api).click()
    form = page.get_by_role("form", name=f"Subscribe to {api}")
    form.get_by_label("App", exact=True).click()
    page.get_by_role("option", name=app).click()
    form.get_by_role("button", name="Subscribe").click()
    expect(form.get_by_role("status")).to_contain_text(f"{app} asked for {api}: pending")
    form.get_by_role("link", name=f"See {app}'s subscriptions").click()


def subscription_row(page: Page, title: str):  # type: ignore[no-untyped-def]
    table = page.get_by_role("table", name="Subscriptions")
    return table.get_by_role("row").filter(has_text=title)


def test_the_catalogue_signed_out_and_an_api_reference(page: Page, site: PortalSite) -> None:
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(site.url)

    apis = page.get_by_role("table", name="APIs")
    expect(apis.get_by_role("link", name="orders")).to_be_visible()
    expect(apis).to_contain_text("2.1.0")
    expect(apis).not_to_contain_text("Stock levels")  # published to signed-in developers only
    products = page.get_by_role("table", name="Products")
    expect(products.get_by_role("row").filter(has_text="Shop essentials")).to_contain_text(
        "1,000 per day, per app"
    )
    site.screenshot(page, "catalogue-signed-out")
    # the first load is the catalogue's: the reference's renderer and the charts are not in it
    assert not [url for url in fetched if re.search(r"/(ApiReference|UsageCharts)-", url)]

    page.get_by_label("Search the catalogue").fill("no such thing")
    expect(page.get_by_text("No API matches this search.")).to_be_visible()
    page.get_by_label("Search the catalogue").fill("ORD")  # ASCII case ignored
    apis.get_by_role("link", name="orders").click()

    expect(page.get_by_role("heading", name="orders", exact=True)).to_be_visible()
    expect(page.get_by_text("to subscribe one of your apps to orders")).to_be_visible()
    reference = page.get_by_role("region", name="API reference")
    expect(reference.get_by_role("heading", name="List the orders")).to_be_visible()
    expect(reference).to_contain_text("The orders, newest first.")
    assert [url for url in fetched if "/ApiReference-" in url]
    site.screenshot(page, "api-reference")

    # a node the visitor may not see is not found, as one that does not exist
    page.goto(f"{site.url}apis/{site.nodes['stock']}")
    expect(page.get_by_role("alert")).to_contain_text("not found")


def test_a_developer_from_registration_to_traffic_on_the_usage_chart(
    page: Page, site: PortalSite
) -> None:
    email = "dana@example.com"
    page.goto(site.url)
    page.get_by_role("link", name="Register").click()
    form = page.get_by_role("form", name="Register")
    form.get_by_label("Name").fill("Dana Developer")
    form.get_by_label("Email").fill(email)
    password = form.get_by_role("textbox", name="Password")
    password.fill("too short")  # the API refuses it, at the field
    form.get_by_role("button", name="Register").click()
    expect(password).to_have_attribute("aria-invalid", "true")
    expect(form).to_contain_text("must be at least 12 characters long")
    password.fill(PASSWORD)
    form.get_by_role("button", name="Register").click()
    expect(page.get_by_role("status")).to_contain_text("Registration received")

    approve_in_console(page, site, email)
    sign_in(page, site, email)
    page.get_by_role("link", name="Catalogue").click()
    expect(page.get_by_role("table", name="APIs")).to_contain_text("Stock levels")

    # an app: its key shown once, copied by its button
    page.get_by_role("link", name="My apps").click()
    create = page.get_by_role("form", name="Create an app")
    create.get_by_label("Name").fill("shop-front")
    create.get_by_role("button", name="Create app").click()
    shown = page.get_by_role("region", name="New key")
    key = shown.get_by_role("textbox", name="API key").input_value()
    assert len(key) >= 20, key
    shown.get_by_role("button", name="Copy key").click()
    expect(shown.get_by_role("button", name="Copy key")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == key
    site.screenshot(page, "app-key-shown-once")
    shown.get_by_role("button", name="I have stored the key").click()
    expect(shown).to_have_count(0)
    row = page.get_by_role("table", name="Apps").get_by_role("row").filter(has_text="shop-front")
    expect(row).to_contain_text("…")  # its first characters only, from now on
    expect(page.get_by_text(key)).to_have_count(0)

    subscribe(page, site, "orders", "shop-front")
    expect(page.get_by_role("heading", name="shop-front")).to_be_visible()
    expect(subscription_row(page, "orders")).to_contain_text("pending")
    expect(page.get_by_text("No requests from this app in the last hour.")).to_be_visible()
    gateway = httpx.Client(base_url=site.gateway, headers={"Host": HOST, "apikey": key}, timeout=10)
    assert gateway.get("/orders").status_code == 401  # not approved yet

    # approved by the administrator: the page, which asks again while it waits, shows it
    pending = ok(site.admin.get("/subscriptions", params={"filter[status]": "pending"}))["data"]
    [mine] = [s for s in pending if s["app"]["name"] == "shop-front"]
    ok(site.admin.post(f"/subscriptions/{mine['id']}/approve"))
    expect(subscription_row(page, "orders")).to_contain_text("active", timeout=60_000)

    # the key admitted by the gateway, three requests, and the chart shows them
    def admitted() -> bool:
        return gateway.get("/orders").status_code == 200

    eventually_sync(admitted, 60, interval=0.2, what="the gateway admits the key")
    for _ in range(2):
        assert gateway.get("/orders").status_code == 200
    gateway.close()
    chart = page.get_by_role("img", name="3 requests, 0 errors in the last hour")

    def charted() -> bool:
        page.get_by_role("button", name="Refresh usage").click()
        page.wait_for_load_state("networkidle")
        return chart.count() == 1

    eventually_sync(charted, 60, interval=1, what="the usage chart shows the three requests")
    expect(page.get_by_role("img", name=re.compile(r"^response time p50 \d"))).to_be_visible()
    site.screenshot(page, "app-subscriptions-and-usage")


def test_a_rejected_subscription_shows_its_reason(page: Page, site: PortalSite) -> None:
    email = "rui@example.com"
    portal = httpx.Client(base_url=f"{site.portico.control}/api/portal/v1", timeout=30)
    with portal:
        registration = {"email": email, "password": PASSWORD, "display_name": "Rui"}
        ok(portal.post("/registrations", json=registration), 202)
    approve_registration(site, email)
    sign_in(page, site, email)
    create = page.get_by_role("form", name="Create an app")
    create.get_by_label("Name").fill("stock-watch")
    create.get_by_role("button", name="Create app").click()
    page.get_by_role("button", name="I have stored the key").click()

    subscribe(page, site, "Stock levels", "stock-watch")
    expect(subscription_row(page, "Stock levels")).to_contain_text("pending")

    pending = ok(site.admin.get("/subscriptions", params={"filter[status]": "pending"}))["data"]
    [theirs] = [s for s in pending if s["app"]["name"] == "stock-watch"]
    ok(site.admin.post(f"/subscriptions/{theirs['id']}/reject", json={"reason": REASON}))
    row = subscription_row(page, "Stock levels")
    expect(row).to_contain_text("rejected", timeout=30_000)
    expect(row).to_contain_text(REASON)
    expect(row.get_by_role("button")).to_have_count(0)  # a rejected one cannot be cancelled
    site.screenshot(page, "subscription-rejected")


def test_an_organisations_apis_are_shown_to_its_members_only(page: Page, site: PortalSite) -> None:
    """An API published to one partner organisation: not in the catalogue of a signed-out
    visitor (nor reachable by its address), in that of a member once signed in, marked as
    the organisation's."""
    # organisations are made by the operator, not by a public API: written to the store
    partner, title = f"Partner {uuid.uuid4().hex[:6]}", f"Partner pricing {uuid.uuid4().hex[:6]}"
    organisation, now = uuid.uuid4(), datetime.now(UTC)
    engine = create_engine(site.database_url.replace("sqlite+aiosqlite", "sqlite", 1))
    try:
        with engine.begin() as connection:
            row = {"id": organisation, "name": partner, "domains": []}
            connection.execute(insert(Organisation), [row | {"created_at": now, "updated_at": now}])
    finally:
        engine.dispose()
    api = {"title": title, "version": "1.0.0", "overview": "Prices for partners only."}
    node = ok(site.admin.post("/apis", json=api), 201)["data"]["id"]
    for transition in ("submit_for_review", "publish"):
        moved = {"nodes": [node], "transition": transition}
        assert ok(site.admin.post("/publishing/transitions", json=moved))["meta"]["failed"] == []
    audience = {"nodes": [node], "visibility": "organisation", "organisations": [str(organisation)]}
    assert ok(site.admin.post("/publishing/visibility", json=audience))["meta"]["failed"] == []
    # a member: registered as the partner's, approved by the organisation's manager
    email = f"{uuid.uuid4().hex[:6]}@partner.example.com"
    with httpx.Client(base_url=f"{site.portico.control}/api/portal/v1", timeout=30) as portal:
        registration = {"email": email, "password": PASSWORD, "organisation": str(organisation)}
        ok(portal.post("/registrations", json=registration | {"display_name": "Pat"}), 202)
    approvals = f"/organisations/{organisation}/approvals"
    [waiting] = ok(site.admin.get(approvals))["data"]
    ok(site.admin.post(f"{approvals}/{waiting['id']}/approve"))

    page.goto(site.url)
    apis = page.get_by_role("table", name="APIs")
    expect(apis.get_by_role("link", name="orders")).to_be_visible()
    expect(apis).not_to_contain_text(title)
    page.goto(f"{site.url}apis/{node}")
    expect(page.get_by_role("alert")).to_contain_text("not found")

    sign_in(page, site, email)
    page.get_by_role("link", name="Catalogue").click()
    row = page.get_by_role("table", name="APIs").get_by_role("row").filter(has_text=title)
    expect(row).to_contain_text("Your organisation")
    row.get_by_role("link", name=title).click()
    expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible()
