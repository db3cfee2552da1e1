"""The web console in a real browser, against a real ``portico serve`` shared by the module:
the journey the issue asks for through the console alone (sign in, an upstream through the
wizard, an OpenAPI file imported, bound and deployed, a product and an app, a request through
the gateway on a chart), the seed's rule that "Add Service" is disabled for a user without
``api.create``, the revision editor (route and plugin forms, errors at the field), the forms
that write products, developers, roles, groups, consumers and identity providers, live
upstream health, 10,000 APIs paged and searched, and what the sign-in route loads."""

from __future__ import annotations

import gzip
import os
import re
import threading
import time
import uuid
from datetime import UTC, datetime
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import create_engine, insert

from portico.management.api.models import Api
from tests.console.conftest import OWNER, OWNER_PASSWORD, Console, screenshot
from tests.e2e.test_gateway import Echo
from tests.management.identity_provider.test_identity_providers import pem
from tests.support.management_calls import ROUTE, deployed_api
from tests.support.portico_process import wait_for
from tests.support.ports import free_port

pytestmark = [
    pytest.mark.e2e,
    # The pages call the same HTTP API over either store (its tests run on both): the
    # browser runs once, under SQLite, to keep the suite's time.
    pytest.mark.skipif(
        os.environ.get("PORTICO_TEST_STORE") == "postgresql",
        reason="browser tests run under SQLite only (the API they call is tested on both)",
    ),
]

#: the environment `portico bootstrap` creates, as `make run` leaves it
BOOTSTRAPPED_ENV = "test"
BOOTSTRAPPED_HOST = "test.gateway.localhost"
#: the label of a form's Name field, not of its "Display name" (a required field's label
#: ends with an asterisk)
NAME = re.compile(r"^Name( \*)?$")
#: the issue's budget for the sign-in route: compressed JavaScript
FIRST_LOAD_BUDGET = 300 * 1024


def unique(prefix: str) -> str:
    """A name no other test of the module uses (they share one server)."""
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def sign_in(page: Page, console: Console, email: str, password: str) -> None:
    page.goto(console.url)
    page.get_by_label("Email").fill(email)
    page.get_by_role("textbox", name="Password").fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def choose(page: Page, scope: Any, label: str, option: str) -> None:
    """Pick ``option`` in the select (or multi-select) labelled ``label`` (a required
    field's label ends with an asterisk), then leave it: a multi-select's list stays open
    over what is below it until then."""
    field = scope.get_by_role("combobox", name=re.compile(rf"^{re.escape(label)}( \*)?$"))
    field.click(force=True)  # a multi-select's input is under its pills' box
    page.get_by_role("option", name=option, exact=True).click()
    field.press("Tab")


def open_api(page: Page, name: str) -> None:
    """The API's page, found through the APIs list's search (the list is paged)."""
    page.get_by_role("link", name="APIs").click()
    page.get_by_role("textbox", name="Search APIs").fill(name)
    page.get_by_role("table", name="APIs").get_by_role("link", name=name, exact=True).click()
    expect(page.get_by_role("heading", name=name)).to_be_visible()


def test_sign_in_loads_little_then_shows_environments(
    page: Page, console: Console, screenshots: Path
) -> None:
    """The sign-in route loads at most 300 KB of compressed JavaScript (the pages, the
    charts and the form generator come later, each with its page); then a refusal, the
    environments with their gateway hosts, an environment's nodes, and a deep link."""
    name = unique("signin")
    with console.management() as cp:
        created = cp.post("/envs", json={"name": name, "gatewayHosts": [f"{name}.example.com"]})
        assert created.status_code == 201, created.text

    scripts: list[str] = []
    page.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script" else None)
    page.goto(console.url)
    expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()
    page.wait_for_load_state("networkidle")
    sizes = {url: len(gzip.compress(httpx.get(url).content)) for url in scripts}
    print(f"sign-in route: {sum(sizes.values())} bytes of gzipped JavaScript, {len(sizes)} files")
    assert sum(sizes.values()) <= FIRST_LOAD_BUDGET, sizes
    assert not any("Analytics" in url or "RevisionEditor" in url for url in scripts), scripts

    page.get_by_label("Email").fill(OWNER)
    page.get_by_role("textbox", name="Password").fill("not the password")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_role("alert")).to_contain_text("Sign-in refused")
    page.get_by_role("textbox", name="Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_role("heading", name="Environments")).to_be_visible()
    table = page.get_by_role("table", name="Environments")
    row = table.get_by_role("row").filter(has_text=name)
    expect(row).to_contain_text(f"{name}.example.com")

    row.get_by_role("link", name=name).click()
    expect(page).to_have_url(f"{console.url}environments/{created.json()['id']}")
    expect(page.get_by_role("heading", name="Data-plane nodes")).to_be_visible()
    expect(page.get_by_text("Nothing is deployed here yet.")).to_be_visible()
    # serve's own gateway reports itself as the environment's node (embedded.py)
    nodes = page.get_by_role("table", name="Data-plane nodes")
    gateway_address = console.env["PORTICO_GATEWAY_LISTEN"]
    expect(nodes.get_by_role("row").filter(has_text=gateway_address)).to_contain_text("in sync")
    screenshot(page, screenshots, "environment with its nodes")

    # a reload of a deep link reaches the same page (the server answers the console's index)
    page.reload()
    expect(page.get_by_role("heading", name=name)).to_be_visible()


def test_environments_are_added_changed_and_deleted(page: Page, console: Console) -> None:
    """An environment added in the console (a gateway host another environment serves
    refused at the hosts field), its hosts changed, then deleted."""
    name = unique("staging")
    host, other = f"{name}.example.com", f"{name}-2.example.com"
    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("button", name="Add environment").click()
    form = page.get_by_role("form", name="Add environment")
    form.get_by_label(NAME).fill(name)
    hosts = form.get_by_role("combobox", name="Gateway hosts")
    for typed in (host, BOOTSTRAPPED_HOST):
        hosts.fill(typed)
        hosts.press("Enter")
    form.get_by_role("button", name="Create environment").click()
    expect(hosts).to_have_attribute("aria-invalid", "true")
    expect(form).to_contain_text(f"{BOOTSTRAPPED_HOST} already serves another environment")
    hosts.press("Backspace")  # the taken one goes
    form.get_by_role("button", name="Create environment").click()
    row = page.get_by_role("table", name="Environments").get_by_role("row").filter(has_text=name)
    expect(row).to_contain_text(host)

    row.get_by_role("button", name=f"Edit {name}").click()
    form = page.get_by_role("form", name=f"Edit environment {name}")
    hosts = form.get_by_role("combobox", name="Gateway hosts")
    hosts.fill(other)
    hosts.press("Enter")
    form.get_by_role("button", name="Save environment").click()
    expect(row).to_contain_text(other)

    row.get_by_role("button", name=f"Delete {name}").click()
    page.get_by_role("dialog", name=f"Delete environment {name}").get_by_role(
        "button", name="Delete environment"
    ).click()
    expect(row).to_have_count(0)
    with console.management() as cp:
        names = [e["name"] for e in cp.get("/envs", params={"size": 100}).json()["items"]]
    assert name not in names


def test_serve_says_where_the_pages_are_and_the_portal_why_it_cannot_sign_in(
    page: Page, console: Console
) -> None:
    """`portico serve` as `make run` starts it: its banner names the console and the portal,
    and that developers cannot sign in to the portal until an operator sets the web API key
    (the seed: token issuance is off until then; this serve never set it). The portal's
    sign-in says so to the developer who tries, rather than failing obscurely."""
    banner = console.log.read_text()
    assert f"web console on {console.url}" in banner, banner
    assert f"developer portal on {console.control}/portal/" in banner, banner
    assert "developers cannot sign in there until an operator runs" in banner, banner
    assert "`portico admin-api set-web-api-key`" in banner, banner

    page.goto(f"{console.control}/portal/sign-in")
    form = page.get_by_role("form", name="Sign in")
    form.get_by_label("Email").fill(OWNER)
    form.get_by_role("textbox", name="Password").fill(OWNER_PASSWORD)
    form.get_by_role("button", name="Sign in").click()
    explained = form.get_by_role("alert")
    expect(explained).to_contain_text("Signing in is not switched on yet")
    expect(explained).to_contain_text("portico admin-api set-web-api-key")


def test_from_an_upstream_to_traffic_on_a_chart(
    page: Page, console: Console, echo: int, screenshots: Path, tmp_path: Path
) -> None:
    """The issue's journey, in the console only, on the environment `make run` leaves: an
    upstream through the wizard, an OpenAPI file imported (its key-auth and product-quota
    with it), bound and deployed, a product deployed there, a developer's app with a
    generated key (shown once, copied), requests with that key through the gateway, and
    them on a chart; a picture of each main page on the way."""
    api_name = unique("journey")
    document = tmp_path / "journey.yaml"
    document.write_text(
        "openapi: 3.0.3\n"
        f"info: {{title: {api_name}, version: '1.0'}}\n"
        "x-portico: {plugins: {key-auth: {}, product-quota: {}}}\n"
        "paths:\n"
        f"  /{api_name}/orders: {{get: {{responses: {{'200': {{description: ok}}}}}}}}\n"
        f"  /{api_name}/orders/{{id}}: {{get: {{responses: {{'200': {{description: ok}}}}}}}}\n"
    )
    broken = tmp_path / "broken.json"
    broken.write_text('{"openapi": "3.0.3", "paths": {}}')  # no info: not a document
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=console.control)
    sign_in(page, console, OWNER, OWNER_PASSWORD)
    screenshot(page, screenshots, "environments")

    # an upstream to the echo backend, with active health checks, through the wizard
    upstream = unique("backend")
    page.get_by_role("link", name="Upstreams").click()
    page.get_by_role("button", name="Add Upstream").click()
    wizard = page.get_by_role("dialog", name="Add Upstream")
    wizard.get_by_label("Name").fill(upstream)
    choose(page, wizard, "Environment", BOOTSTRAPPED_ENV)
    wizard.get_by_role("button", name="Next").click()
    wizard.get_by_label("Host").fill("127.0.0.1")
    wizard.get_by_label("Port").fill(str(echo))
    wizard.get_by_role("button", name="Add node").click()
    wizard.get_by_role("button", name="Next").click()
    wizard.get_by_label("Active checks").check()
    wizard.get_by_role("button", name="Create upstream").click()
    expect(wizard).to_have_count(0)
    health = page.get_by_role("status", name=f"Health of {upstream}")
    expect(health).to_contain_text("No gateway node runs it yet")  # deployed nowhere yet

    # the API, from an OpenAPI file
    page.get_by_role("link", name="APIs").click()
    importer = page.get_by_role("button", name="Import OpenAPI")

    def upload(path: Path) -> None:
        with page.expect_file_chooser() as chooser:
            importer.click()
        chooser.value.set_files(path)

    upload(broken)
    expect(page.get_by_role("status").first).to_contain_text("info")  # the refusal, named
    upload(document)
    expect(page.get_by_text(f"Imported {api_name}: revision 1 with 2 routes")).to_be_visible()
    screenshot(page, screenshots, "apis")

    # bound to the upstream in the environment, checked, deployed
    open_api(page, api_name)
    choose(page, page, "Target environment", BOOTSTRAPPED_ENV)
    choose(page, page, "Upstream", upstream)
    outcome = page.get_by_role("status", name="Deploy outcome")
    page.get_by_role("button", name="Dry run").click()
    expect(outcome).to_contain_text(f"revision 1 can be deployed to {BOOTSTRAPPED_ENV}")
    page.get_by_role("button", name="Deploy", exact=True).click()
    expect(outcome).not_to_contain_text("can be deployed")
    live = page.get_by_role("table", name="Revisions").get_by_role("row").filter(has_text="ACTIVE")
    expect(live).to_contain_text(BOOTSTRAPPED_ENV)
    screenshot(page, screenshots, "api revisions and deploy")

    # the gateway now probes the upstream: its node is healthy, live on the page
    page.get_by_role("link", name="Upstreams").click()
    choose(page, page, "Environment", BOOTSTRAPPED_ENV)
    health = page.get_by_role("status", name=f"Health of {upstream}")
    expect(health).to_contain_text(f"127.0.0.1:{echo} healthy")
    screenshot(page, screenshots, "upstreams with live health")

    # a product of the API with a quota, deployed to the environment
    plan = unique("plan")
    page.get_by_role("link", name="Products").click()
    page.get_by_role("button", name="Add product").click()
    form = page.get_by_role("form", name="Add product")
    form.get_by_label(NAME).fill(plan)
    form.get_by_role("combobox", name="APIs").fill(api_name)
    page.get_by_role("option", name=api_name, exact=True).click()
    form.get_by_role("combobox", name="APIs").press("Tab")
    form.get_by_role("button", name="Create product").click()
    row = page.get_by_role("table", name="Products").get_by_role("row").filter(has_text=plan)
    expect(row).to_contain_text("1,000 per day, per app")
    expect(row).to_contain_text(api_name)
    row.get_by_role("button", name=f"Deploy {plan}").click()
    deploying = page.get_by_role("dialog", name=f"Deploy {plan}")
    choose(page, deploying, "Target environment", BOOTSTRAPPED_ENV)
    deploying.get_by_role("button", name="Deploy to environment").click()
    expect(deploying).to_contain_text(f"Deployed in {BOOTSTRAPPED_ENV}")
    page.keyboard.press("Escape")
    expect(row).to_contain_text(BOOTSTRAPPED_ENV)

    # a developer and their app, with a generated key shown once
    email = f"{unique('ada')}@example.com"
    page.get_by_role("button", name="Add developer").click()
    form = page.get_by_role("form", name="Add developer")
    form.get_by_label("First name").fill("Ada")
    form.get_by_label("Last name").fill("Lovelace")
    form.get_by_label("Email").fill(email)
    form.get_by_role("button", name="Create developer").click()
    developer = (
        page.get_by_role("table", name="Developers").get_by_role("row").filter(has_text=email)
    )
    developer.get_by_role("button", name="Apps of Ada Lovelace").click()
    apps = page.get_by_role("dialog", name="Apps of Ada Lovelace")
    choose(page, apps, "Environment", BOOTSTRAPPED_ENV)
    app = unique("mobile")
    created = apps.get_by_role("form", name="Create app")
    created.get_by_label("App name").fill(app)
    choose(page, created, "Products", plan)
    created.get_by_role("button", name="Create app").click()
    shown = apps.get_by_role("region", name=f"Credentials of {app}")
    key = shown.get_by_label("key-auth key", exact=True).inner_text()
    assert len(key) >= 16
    shown.get_by_role("button", name="Copy key-auth key").click()
    expect(shown.get_by_role("button", name="Copy key-auth key")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == key
    expect(
        apps.get_by_role("table", name="Apps").get_by_role("row").filter(has_text=app)
    ).to_contain_text(plan)
    page.keyboard.press("Escape")
    screenshot(page, screenshots, "products and developers")

    # through the gateway: the key opens the API, and nothing else does
    gateway = httpx.Client(
        base_url=console.gateway, headers={"Host": BOOTSTRAPPED_HOST}, timeout=10
    )
    path = f"/{api_name}/orders"
    wait_for(lambda: gateway.get(path, headers={"apikey": key}).status_code == 200)
    assert gateway.get(path).status_code == 401
    for _ in range(4):
        assert gateway.get(path, headers={"apikey": key}).status_code == 200

    # and on a chart: requests by app over the last hour
    page.get_by_role("link", name="Analytics").click()
    page.get_by_role("button", name="Add widget").click()
    form = page.get_by_role("form", name="Add widget")
    chart = unique("Traffic by app")
    form.get_by_label("Name").fill(chart)
    choose(page, form, "Chart", "table")
    choose(page, form, "Group by", "app_name")
    form.get_by_role("button", name="Create widget").click()
    page.get_by_role("button", name="Add widget").click()
    over_time = unique("Traffic over time")
    form.get_by_label("Name").fill(over_time)
    choose(page, form, "Chart", "line")
    choose(page, form, "Group by", "nothing")
    form.get_by_role("button", name="Create widget").click()
    with console.management() as cp:
        widgets = {
            w["name"]: w["id"] for w in cp.get("/widgets", params={"size": 100}).json()["items"]
        }

        def counted() -> bool:
            rows = cp.get(f"/widgets/{widgets[chart]}/data").json()["data"]
            return any(r["dimensions"].get("app_name") == app and r["value"] >= 5 for r in rows)

        wait_for(counted, timeout=30)
    page.reload()
    by_app = page.get_by_role("table", name=f"{chart} data")
    expect(by_app.get_by_role("row").filter(has_text=app)).to_have_count(1)
    expect(page.get_by_role("region", name=over_time).locator("svg .recharts-line")).to_have_count(
        1
    )
    screenshot(page, screenshots, "analytics")


def test_add_service_needs_api_create(page: Page, console: Console) -> None:
    """A user invited through the console with the Viewer role (the invitation shown once),
    who accepts it in the browser by its link, sees Add Service disabled with the reason,
    and the other additions likewise; a user with api.create adds a service, a refused name
    shown at its field."""
    viewer = f"{unique('viewer')}@example.com"
    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Access").click()
    page.get_by_role("button", name="Invite user").click()
    form = page.get_by_role("form", name="Invite user")
    form.get_by_label("Email").fill(viewer)
    choose(page, form, "Roles", "Viewer")
    form.get_by_role("button", name="Send invitation").click()
    invitation = page.get_by_role("region", name=f"Invitation of {viewer}")
    link = invitation.get_by_label("Invitation link", exact=True).inner_text()
    assert link.startswith(f"{console.url}accept-invitation#token="), link
    expect(
        page.get_by_role("table", name="Users").get_by_role("row").filter(has_text=viewer)
    ).to_contain_text("Viewer")
    page.get_by_role("button", name="Sign out").click()

    # the invited user opens the link: sets a password (a short one refused at its field)
    # and is signed in, as the Viewer the invitation makes them
    page.goto(link)
    form = page.get_by_role("form", name="Accept the invitation")
    chosen = form.get_by_role("textbox", name=re.compile("^Choose a password"))
    repeated = form.get_by_role("textbox", name=re.compile("^Repeat the password"))
    for field, value in ((chosen, "too short"), (repeated, "too short")):
        field.fill(value)
    form.get_by_role("button", name="Accept the invitation").click()
    expect(chosen).to_have_attribute("aria-invalid", "true")
    expect(form).to_contain_text("at least 12 characters")
    for field in (chosen, repeated):
        field.fill("viewer-password-123")
    form.get_by_role("button", name="Accept the invitation").click()
    expect(page).to_have_url(f"{console.url}environments")
    expect(page.get_by_role("button", name="Add environment")).to_be_disabled()
    expect(page.get_by_role("button", name=f"Delete {BOOTSTRAPPED_ENV}")).to_be_disabled()
    expect(
        page.get_by_text(
            "Adding, changing or deleting an environment needs the environment.manage permission."
        )
    ).to_be_visible()
    page.get_by_role("button", name="Sign out").click()

    sign_in(page, console, viewer, "viewer-password-123")  # the password chosen is its own
    page.get_by_role("link", name="APIs").click()
    expect(page.get_by_role("button", name="Add Service")).to_be_disabled()
    page.get_by_label("Add Service needs the api.create permission").hover()
    expect(page.get_by_text("You need the api.create permission to add a service")).to_be_visible()
    page.get_by_role("link", name="Upstreams").click()
    expect(page.get_by_role("button", name="Add Upstream")).to_be_disabled()
    expect(
        page.get_by_text("Adding an upstream needs the upstream.manage permission.")
    ).to_be_visible()
    page.get_by_role("link", name="Products").click()
    expect(page.get_by_role("button", name="Add product")).to_be_disabled()
    page.get_by_role("link", name="Access").click()
    expect(page.get_by_role("button", name="Add role")).to_be_disabled()
    expect(page.get_by_text("Add role needs the role.manage permission.")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()

    name = unique("orders")
    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="APIs").click()
    page.get_by_role("button", name="Add Service").click()
    form = page.get_by_role("form", name="Add Service")
    form.get_by_label("Name").fill(f" {name}")  # a leading space: the API refuses the name
    form.get_by_role("button", name="Create").click()
    expect(form.get_by_label("Name")).to_have_attribute("aria-invalid", "true")
    form.get_by_label("Name").fill(name)
    form.get_by_role("button", name="Create").click()
    page.get_by_role("textbox", name="Search APIs").fill(name)
    expect(page.get_by_role("table", name="APIs").get_by_role("row")).to_have_count(2)


def test_the_add_upstream_wizard_with_service_discovery(page: Page, console: Console) -> None:
    """With Service discovery on, Targets asks for the discovery type and the service name
    instead of nodes (Next waits for the name); a name DNS cannot resolve is refused at that
    field; the upstream is created with ``discovery`` and listed with its service name."""
    env_name = unique("dns")
    with console.management() as cp:
        env = cp.post("/envs", json={"name": env_name, "gatewayHosts": [f"{env_name}.example.com"]})
        assert env.status_code == 201, env.text

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Upstreams").click()
    page.get_by_role("button", name="Add Upstream").click()
    wizard = page.get_by_role("dialog", name="Add Upstream")
    next_step = wizard.get_by_role("button", name="Next")
    wizard.get_by_label("Name").fill("orders-dns")
    wizard.get_by_label("Environment").click()
    page.get_by_role("option", name=env_name, exact=True).click()
    next_step.click()

    wizard.get_by_label("Service discovery").check()
    expect(wizard.get_by_label("Host")).to_have_count(0)  # nodes come from discovery
    expect(wizard.get_by_role("combobox", name="Discovery type")).to_have_value(
        "DNS (A/AAAA or SRV records)"
    )
    expect(next_step).to_be_disabled()  # no service name yet
    service = wizard.get_by_role("textbox", name="Service name")
    service.fill("orders.internal")  # no port: the API refuses it, at this field
    next_step.click()
    wizard.get_by_role("button", name="Create upstream").click()
    wizard.get_by_role("button", name="Back").click()
    expect(service).to_have_attribute("aria-invalid", "true")
    expect(wizard).to_contain_text("an A/AAAA name needs the port of its nodes")
    service.fill("orders.internal:8080")
    next_step.click()
    wizard.get_by_role("button", name="Create upstream").click()

    row = (
        page.get_by_role("table", name="Upstreams").get_by_role("row").filter(has_text="orders-dns")
    )
    expect(row).to_contain_text("dns: orders.internal:8080")
    with console.management() as cp:
        [stored] = cp.get(f"/envs/{env.json()['id']}/upstreams").json()["items"]
    assert stored["specification"]["nodes"] is None
    assert stored["specification"]["discovery"] == {
        "type": "dns",
        "serviceName": "orders.internal:8080",
    }


def test_revisions_compare_and_deploy_with_the_conflict_explained(
    page: Page, console: Console, echo: int
) -> None:
    """An API deployed at revision 1; in the console: clone it, compare the clone (changed by
    the API) with revision 1, dry-run it, deploy it (refused: revision 1 is live, the
    conflict explained), deploy it with force, and roll back to revision 1 the same way."""
    env_name, api_name = unique("prod"), unique("orders")
    with console.management() as cp:
        deployed = deployed_api(
            cp,
            host=f"{env_name}.example.com",
            backend=echo,
            plugins={},
            env_name=env_name,
            api_name=api_name,
        )
        api = deployed["api"]

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    open_api(page, api_name)
    revisions = page.get_by_role("table", name="Revisions")
    expect(revisions.get_by_role("row")).to_have_count(2)
    revisions.get_by_role("button", name="Clone revision 1").click()
    expect(revisions.get_by_role("row")).to_have_count(3)

    # the clone gets a second route, by the API, as a script would change it
    with console.management() as cp:
        items = cp.get(f"/apis/{api['id']}/revisions").json()["items"]
        clone = next(r for r in items if r["number"] == 2)
        second = {**ROUTE, "name": "create", "methods": ["POST"]}
        changed = cp.put(
            f"/apis/{api['id']}/revisions/{clone['id']}/route-spec",
            json={"routeSpec": [ROUTE, second]},
        )
        assert changed.status_code == 200, changed.text
    page.reload()
    differences = page.get_by_label("Differences")
    expect(differences).to_contain_text('+       "name": "create"')
    expect(differences).not_to_contain_text('-       "name": "list"')

    choose(page, page, "Target environment", env_name)
    outcome = page.get_by_role("status", name="Deploy outcome")
    page.get_by_role("button", name="Dry run").click()
    expect(outcome).to_contain_text(f"revision 2 can be deployed to {env_name}")
    page.get_by_role("button", name="Deploy", exact=True).click()
    expect(outcome).to_contain_text("Environment already has revision 1 deployed")
    expect(outcome).to_contain_text("Deploying with force replaces it")
    outcome.get_by_role("button", name="Deploy with force").click()
    expect(outcome).not_to_contain_text("already has revision")
    live = revisions.get_by_role("row").filter(has_text=env_name)
    expect(live).to_have_count(1)
    expect(live).to_contain_text("2")

    # the rollback: revision 1 again, with force
    choose(page, page, "Revision", "Revision 1")
    page.get_by_role("button", name="Deploy", exact=True).click()
    outcome.get_by_role("button", name="Deploy with force").click()
    expect(outcome).not_to_contain_text("already has revision")
    expect(revisions.get_by_role("row").filter(has_text=env_name)).to_contain_text("ACTIVE")
    with console.management() as cp:
        [deployment] = cp.get(f"/apis/{api['id']}/deployments").json()["items"]
    assert deployment["revisionNumber"] == 1


def test_the_revision_editor_routes_and_plugins(page: Page, console: Console) -> None:
    """An undeployed revision edited in the console: a service-level plugin and a route with
    its own plugin, each plugin's form generated from its JSON Schema (a value the schema
    refuses shown at its field before anything is sent), the seed's route rules refused by
    the API and shown at the field; what is stored is what was entered."""
    api_name = unique("editor")
    with console.management() as cp:
        api = cp.post("/apis", json={"name": api_name}).json()
        body = {"serviceSpec": {"plugins": {}}, "routeSpec": [ROUTE], "environmentUpstreams": []}
        revision = cp.post(f"/apis/{api['id']}/revisions", json=body)
        assert revision.status_code == 201, revision.text

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    open_api(page, api_name)
    choose(page, page, "Revision to edit", "Revision 1 (INACTIVE)")

    # a service-level limit-count
    page.get_by_role("combobox", name="Add plugin").fill("limit-count")
    page.get_by_role("option", name="limit-count", exact=True).click()
    form = page.get_by_role("region", name="limit-count configuration")
    count = form.get_by_label("Count", exact=False).first
    count.fill("0")  # the schema: more than 0
    form.get_by_label("Time Window").fill("60")
    form.get_by_role("button", name="Save plugin").click()
    expect(form).to_contain_text("must be > 0")
    count.fill("5")
    count.blur()  # checked again as it is left: the error goes (and the button moves up)
    expect(form).not_to_contain_text("must be > 0")
    form.get_by_role("button", name="Save plugin").click()
    expect(form).to_have_count(0)  # saved: the form closes
    expect(page.get_by_text('"count":5')).to_be_visible()

    # a route with its own plugin; a script of under 10 characters refused at its field
    page.get_by_role("button", name="Add route").click()
    editor = page.get_by_role("dialog", name="Add route")
    editor.get_by_label("Name").fill("create")
    editor.get_by_label("URI").fill("/orders")
    choose(page, editor, "Methods", "POST")
    editor.get_by_label("Script").fill("short")
    editor.get_by_role("combobox", name="Add plugin").fill("cors")
    page.get_by_role("option", name="cors", exact=True).click()
    editor.get_by_role("region", name="cors configuration").get_by_role(
        "button", name="Save plugin"
    ).click()
    expect(editor.get_by_role("region", name="cors configuration")).to_have_count(0)
    expect(editor.get_by_role("button", name="Edit cors")).to_be_visible()  # the route's
    editor.get_by_role("button", name="Save route").click()
    expect(editor.get_by_label("Script")).to_have_attribute("aria-invalid", "true")
    expect(editor).to_contain_text("must be at least 10 characters long")
    editor.get_by_label("Script").fill("")  # no script at all is allowed
    editor.get_by_role("button", name="Save route").click()
    expect(editor).to_have_count(0)
    routes = page.get_by_role("table", name="Routes of revision 1")
    expect(routes.get_by_role("row").filter(has_text="create")).to_contain_text("cors")

    # a URI the API refuses, at its field; cancelled, nothing changes
    routes.get_by_role("button", name="Edit route list").click()
    editor = page.get_by_role("dialog", name="Edit route")
    editor.get_by_label("URI").fill("orders")
    editor.get_by_role("button", name="Save route").click()
    expect(editor.get_by_label("URI")).to_have_attribute("aria-invalid", "true")
    expect(editor).to_contain_text("must start with '/'")
    editor.get_by_role("button", name="Cancel", exact=True).last.click()

    with console.management() as cp:
        [stored] = cp.get(f"/apis/{api['id']}/revisions").json()["items"]
    config = stored["serviceSpec"]["plugins"]["limit-count"]
    assert (config["count"], config["time_window"]) == (5, 60)
    assert stored["routeSpec"][0]["uri"] == "/orders"
    created = stored["routeSpec"][1]
    assert (created["name"], created["uri"], created["methods"]) == ("create", "/orders", ["POST"])
    assert set(created["plugins"]) == {"cors"} and "script" not in created


def test_the_audit_log_shows_each_change_as_a_diff(
    page: Page, console: Console, screenshots: Path
) -> None:
    name = unique("edge")
    with console.management() as cp:
        env = cp.post("/envs", json={"name": name, "gatewayHosts": ["old.example.com"]}).json()
        changed = cp.patch(f"/envs/{env['id']}", json={"gatewayHosts": ["new.example.com"]})
        assert changed.status_code == 200, changed.text

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Audit log").click()
    log = page.get_by_role("table", name="Audit log")
    update = log.get_by_role("row").filter(has_text="environment.update").first  # newest first
    expect(update).to_contain_text(OWNER)
    update.get_by_role("button", name="Show changes").click()
    changes = page.get_by_label("Changes of environment.update")
    expect(changes).to_contain_text('- "old.example.com"')
    expect(changes).to_contain_text('+ "new.example.com"')
    expect(changes).to_contain_text(f'"name": "{name}"')
    expect(changes).not_to_contain_text(f'- "name": "{name}"')  # unchanged lines are context
    screenshot(page, screenshots, "audit log")


def test_analytics_widgets_as_charts_and_the_empty_data_message(
    page: Page, console: Console, echo: int
) -> None:
    """Traffic through the embedded gateway to an environment of its own, then widgets over
    it: a number, a pie by status, one filtered to an environment without traffic, which
    shows the seed's empty-data message, and a pie and a table by app, where the traffic no
    app made is "(no app)"."""
    env_name, host = unique("shop"), f"{unique('shop')}.example.com"
    with console.management() as cp:
        env = deployed_api(
            cp, host=host, backend=echo, plugins={}, env_name=env_name, api_name=unique("orders")
        )["env"]
        quiet = cp.post("/envs", json={"name": unique("quiet")}).json()

        # the embedded gateway runs the deploy once it reports the environment's version
        # (then every request below is one the widgets must count: exactly six)
        def live() -> bool:
            expected = cp.get(f"/envs/{env['id']}").json()["configVersion"]
            nodes = cp.get(f"/envs/{env['id']}/nodes").json()["items"]
            return any(node["configVersion"] == expected for node in nodes)

        wait_for(live)
        for _ in range(6):
            assert httpx.get(f"{console.gateway}/orders", headers={"Host": host}).status_code == 200

        def widget(name: str, chart: str, env_id: str, **extra: object) -> str:
            body = {"name": name, "metric": "requests-count", "aggregation": "SUM"}
            filters = {"window": "1h", "environmentId": env_id}
            body |= {"chart": chart, "filters": filters, **extra}
            created = cp.post("/widgets", json=body)
            assert created.status_code == 201, created.text
            return str(created.json()["id"])

        total_name, by_status_name, quiet_name = (
            unique("Requests"),
            unique("By status"),
            unique("Quiet"),
        )
        total = widget(total_name, "number", env["id"])
        by_status_id = widget(by_status_name, "pie", env["id"], dimensions=["response_status_code"])
        widget(quiet_name, "number", quiet["id"])
        # no app made these requests (the API has no key-auth): named so, not left blank
        by_app_pie, by_app_table = unique("Pie by app"), unique("Table by app")
        widget(by_app_pie, "pie", env["id"], dimensions=["app_name"])
        widget(by_app_table, "table", env["id"], dimensions=["app_name"])

        def shipped() -> bool:
            """All six requests counted by both widgets (the node ships in batches)."""
            value = cp.get(f"/widgets/{total}/data").json()["value"]
            grouped = cp.get(f"/widgets/{by_status_id}/data").json()["data"]
            return value == 6 and sum(row["value"] for row in grouped) == 6

        wait_for(shipped)
        statuses = cp.get(f"/widgets/{by_status_id}/data").json()["data"]

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Analytics").click()
    expect(page.get_by_label(f"{total_name}: value")).to_have_text("6")
    by_status = page.get_by_role("region", name=by_status_name)
    expect(by_status.locator("svg .recharts-pie-sector")).to_have_count(len(statuses))
    expect(page.get_by_role("region", name=quiet_name)).to_contain_text(
        "No data for the selected filters"
    )
    expect(
        page.get_by_role("region", name=by_app_pie).locator(".recharts-legend-wrapper")
    ).to_have_text("(no app)")
    no_app = page.get_by_role("table", name=f"{by_app_table} data").get_by_role("row").nth(1)
    expect(no_app).to_have_text("(no app)6")


def test_products_and_developers_forms(page: Page, console: Console) -> None:
    """A product without a quota (traffic refused, and said so), changed to unlimited; a
    name and an email the API refuses, each shown at its field."""
    api_name, plan = unique("catalogue"), unique("free")
    with console.management() as cp:
        assert cp.post("/apis", json={"name": api_name}).status_code == 201

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Products").click()
    page.get_by_role("button", name="Add product").click()
    form = page.get_by_role("form", name="Add product")
    form.get_by_label(NAME).fill(f" {plan}")  # a leading space: refused
    form.get_by_role("combobox", name="APIs").fill(api_name)
    page.get_by_role("option", name=api_name, exact=True).click()
    form.get_by_role("combobox", name="APIs").press("Tab")
    choose(page, form, "Quota", "None: traffic through the product is refused")
    form.get_by_role("button", name="Create product").click()
    expect(form.get_by_label(NAME)).to_have_attribute("aria-invalid", "true")
    form.get_by_label(NAME).fill(plan)
    form.get_by_role("button", name="Create product").click()
    row = page.get_by_role("table", name="Products").get_by_role("row").filter(has_text=plan)
    expect(row).to_contain_text("no quota: traffic refused")

    row.get_by_role("button", name=f"Edit {plan}").click()
    form = page.get_by_role("form", name=f"Edit product {plan}")
    choose(page, form, "Quota", "Unlimited")
    form.get_by_role("button", name="Save product").click()
    expect(row).to_contain_text("unlimited")
    expect(row).to_contain_text(api_name)

    page.get_by_role("button", name="Add developer").click()
    form = page.get_by_role("form", name="Add developer")
    form.get_by_label("First name").fill("Grace")
    form.get_by_label("Last name").fill("Hopper")
    form.get_by_label("Email").fill("not an email")
    form.get_by_role("button", name="Create developer").click()
    expect(form.get_by_label("Email")).to_have_attribute("aria-invalid", "true")
    email = f"{unique('grace')}@example.com"
    form.get_by_label("Email").fill(email)
    form.get_by_role("button", name="Create developer").click()
    developers = page.get_by_role("table", name="Developers")
    expect(developers.get_by_role("row").filter(has_text=email)).to_contain_text("Grace Hopper")

    with console.management() as cp:
        products = cp.get("/products", params={"size": 100}).json()["items"]
    [stored] = [p for p in products if p["name"] == plan]
    assert stored["quota"]["limit"] == -1 and len(stored["apiIds"]) == 1


def test_access_forms(page: Page, console: Console, screenshots: Path) -> None:
    """A custom role with its permissions, a group granting it to a member, a consumer whose
    generated key is shown once (and masked after), and an identity provider inactive until
    it has a mapping (the seed), then active."""
    role, group, consumer, provider = (unique(p) for p in ("auditors", "ops", "mobile", "corp-sso"))
    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Access").click()

    page.get_by_role("button", name="Add role").click()
    form = page.get_by_role("form", name="Add role")
    form.get_by_label(NAME).fill(role)
    form.get_by_label("audit.read", exact=False).check()
    form.get_by_label("api.read", exact=False).check()
    form.get_by_role("button", name="Create role").click()
    roles = page.get_by_role("table", name="Roles")
    row = roles.get_by_role("row").filter(has_text=role)
    expect(row).to_contain_text("custom")
    expect(row).to_contain_text("audit.read")

    page.get_by_role("button", name="Add group").click()
    form = page.get_by_role("form", name="Add group")
    form.get_by_label(NAME).fill(group)
    choose(page, form, "Roles", role)
    choose(page, form, "Members", OWNER)
    form.get_by_role("button", name="Create group").click()
    row = page.get_by_role("table", name="Groups").get_by_role("row").filter(has_text=group)
    expect(row).to_contain_text(role)
    expect(row).to_contain_text("1")

    page.get_by_role("button", name="Add consumer").click()
    form = page.get_by_role("form", name="Add consumer")
    form.get_by_label("Username").fill(consumer)
    form.get_by_role("button", name="Create consumer").click()
    shown = page.get_by_role("region", name=f"Credentials of {consumer}")
    key = shown.get_by_label("key-auth key", exact=True).inner_text()
    row = page.get_by_role("table", name="Consumers").get_by_role("row").filter(has_text=consumer)
    expect(row).to_contain_text("key-auth")

    page.get_by_role("button", name="Add identity provider").click()
    form = page.get_by_role("form", name="Add identity provider")
    form.get_by_label(NAME).fill(provider)
    form.get_by_label("Entity id").fill("https://idp.example.com/metadata")
    form.get_by_label("SSO URL").fill("https://idp.example.com/sso")
    form.get_by_label("Signing certificate (PEM)").fill(pem())  # self-signed, made now
    form.get_by_role("button", name="Create identity provider").click()
    providers = page.get_by_role("table", name="Identity providers")
    row = providers.get_by_role("row").filter(has_text=provider)
    expect(row).to_contain_text("inactive: no mapping")
    row.get_by_role("button", name=f"Edit {provider}").click()
    form = page.get_by_role("form", name=f"Edit identity provider {provider}")
    form.get_by_role("button", name="Add mapping").click()
    form.get_by_label("Attribute 1").fill("urn:oid:0.9.2342.19200300.100.1.3")
    form.get_by_role("button", name="Save identity provider").click()
    expect(row).to_contain_text("active")
    expect(row).not_to_contain_text("inactive")
    screenshot(page, screenshots, "access")

    page.reload()  # the key was shown once: never again
    expect(page.get_by_role("table", name="Consumers")).to_contain_text(consumer)
    assert key not in page.content()


def test_upstream_health_is_live(page: Page, console: Console) -> None:
    """An upstream with active checks, one target up and one down: the upstreams page shows
    the down one unhealthy with the reason, then, without a reload, the other one too once
    its backend stops."""
    env_name = unique("health")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    up, down = server.server_address[1], free_port()
    try:
        with console.management() as cp:
            env = cp.post(
                "/envs", json={"name": env_name, "gatewayHosts": [f"{env_name}.example.com"]}
            ).json()
            checks = {
                "active": {
                    "type": "tcp",
                    "healthy": {"interval": 1},
                    "unhealthy": {"interval": 1, "tcp_failures": 2},
                }
            }
            nodes = [{"host": "127.0.0.1", "port": up}, {"host": "127.0.0.1", "port": down}]
            spec = {"nodes": nodes, "checks": checks}
            upstream = cp.post(
                f"/envs/{env['id']}/upstreams", json={"name": "checked", "specification": spec}
            ).json()
            api = cp.post("/apis", json={"name": unique("checked")}).json()
            binding = {"environmentId": env["id"], "upstreamId": upstream["id"]}
            body = {"routeSpec": [ROUTE], "environmentUpstreams": [binding]}
            revision = cp.post(f"/apis/{api['id']}/revisions", json=body).json()
            deploy = f"/apis/{api['id']}/revisions/{revision['id']}/deploy"
            assert cp.post(deploy, json={"environmentId": env["id"]}).status_code == 200

        sign_in(page, console, OWNER, OWNER_PASSWORD)
        page.get_by_role("link", name="Upstreams").click()
        choose(page, page, "Environment", env_name)
        health = page.get_by_role("status", name="Health of checked")
        expect(health).to_contain_text(
            f"127.0.0.1:{down} unhealthy (active: 2 consecutive tcp_failures)"
        )
        expect(health).to_contain_text(f"127.0.0.1:{up} healthy")
        server.shutdown()
        server.server_close()
        expect(health).to_contain_text(f"127.0.0.1:{up} unhealthy")
    finally:
        server.shutdown()
        server.server_close()


def test_ten_thousand_apis_are_paged_and_searched(page: Page, console: Console) -> None:
    """An organisation of 10,000 APIs (written straight into the store): the APIs page
    shows a page of them, the next, and finds one by a part of its name, each asked of the
    server (the timing of its list calls is printed)."""
    name = f"Zulu bulk {uuid.uuid4().hex[:6]}"  # after Default: other tests keep their org
    with console.management() as cp:
        signed_in = dict(cp.headers)
    org = httpx.post(f"{console.control}/api/orgs", json={"name": name}, headers=signed_in)
    assert org.status_code == 201, org.text
    org_id = uuid.UUID(org.json()["id"])
    assert console.database_url.startswith("sqlite+aiosqlite:///")
    engine = create_engine(console.database_url.replace("sqlite+aiosqlite", "sqlite", 1))
    now = datetime.now(UTC)
    rows = [
        {
            "id": uuid.uuid4(),
            "org_id": org_id,
            "name": f"api-{i:05d}",
            "description": "",
            "next_revision_number": 1,
            "created_at": now,
            "updated_at": now,
        }
        for i in range(1, 10_001)
    ]
    try:
        with engine.begin() as connection:
            connection.execute(insert(Api), rows)
    finally:
        engine.dispose()

    with httpx.Client(base_url=console.control, headers=signed_in, timeout=15) as client:
        timings = {}
        for query in ("?size=20", "?size=20&page=500", "?search=04242&size=20"):
            began = time.perf_counter()
            answer = client.get(f"/api/orgs/{org_id}/apis{query}")
            timings[query] = round((time.perf_counter() - began) * 1000, 1)
            assert answer.status_code == 200, answer.text
        print(f"APIs list of an organisation of 10,000 APIs, ms per call: {timings}")

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    choose(page, page, "Organisation", name)
    page.get_by_role("link", name="APIs").click()
    table = page.get_by_role("table", name="APIs")
    shown = page.get_by_role("status", name="APIs shown")
    expect(shown).to_have_text("1–20 of 10,000")
    expect(table.get_by_role("row")).to_have_count(21)
    expect(table.get_by_role("row").nth(1)).to_contain_text("api-00001")
    page.get_by_role("button", name="Page 2").click()
    expect(shown).to_have_text("21–40 of 10,000")
    expect(table.get_by_role("row").nth(1)).to_contain_text("api-00021")
    page.get_by_role("button", name="last page").click()
    expect(shown).to_have_text("9,981–10,000 of 10,000")
    page.get_by_role("textbox", name="Search APIs").fill("4242")
    expect(shown).to_have_text("1–1 of 1")
    expect(table.get_by_role("row").nth(1)).to_contain_text("api-04242")
