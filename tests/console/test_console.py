"""The web console in a real browser, against a real ``portico serve``: sign-in (refused,
then accepted), the environments with their gateway hosts, an environment's page, and the
seed's rule that "Add Service" is disabled, with its reason, for a user without
``api.create``, while a user with it adds a service through the form (a field's error shown
at the field)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.console.conftest import OWNER, OWNER_PASSWORD, Console
from tests.e2e.test_gateway import backend, wait_for  # noqa: F401 (fixture)
from tests.support.management_calls import ROUTE, deployed_api

pytestmark = [
    pytest.mark.e2e,
    # The pages call the same HTTP API over either store (its tests run on both): the
    # browser runs once, under SQLite, to keep the suite's time.
    pytest.mark.skipif(
        os.environ.get("PORTICO_TEST_STORE") == "postgresql",
        reason="browser tests run under SQLite only (the API they call is tested on both)",
    ),
]

SHOP = "api.shop.example.com"
VIEWER = "viewer@example.com"
VIEWER_PASSWORD = "viewer-password-123"


def sign_in(page: Page, console: Console, email: str, password: str) -> None:
    page.goto(console.url)
    page.get_by_label("Email").fill(email)
    page.get_by_role("textbox", name="Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_sign_in_environments_and_an_environments_page(page: Page, console: Console) -> None:
    with console.management() as cp:
        created = cp.post("/envs", json={"name": "prod", "gatewayHosts": ["api.example.com"]})
        assert created.status_code == 201, created.text

    sign_in(page, console, OWNER, "not the password")
    expect(page.get_by_role("alert")).to_contain_text("Sign-in refused")

    page.get_by_role("textbox", name="Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Environments")).to_be_visible()
    table = page.get_by_role("table", name="Environments")
    row = table.get_by_role("row").filter(has_text="prod")
    expect(row).to_contain_text("api.example.com")

    row.get_by_role("link", name="prod").click()
    expect(page).to_have_url(f"{console.url}environments/{created.json()['id']}")
    expect(page.get_by_role("heading", name="Data-plane nodes")).to_be_visible()
    expect(page.get_by_text("Nothing is deployed here yet.")).to_be_visible()
    # serve's own gateway reports itself as the environment's node (embedded.py)
    gateway_address = console.env["PORTICO_GATEWAY_LISTEN"]
    nodes = page.get_by_role("table", name="Data-plane nodes")
    expect(nodes.get_by_role("row").filter(has_text=gateway_address)).to_contain_text("in sync")

    # a reload of a deep link reaches the same page (the server answers the console's index)
    page.reload()
    expect(page.get_by_role("heading", name="prod")).to_be_visible()


def test_add_service_needs_api_create(page: Page, console: Console) -> None:
    with console.management() as cp:
        roles = cp.get("/roles", params={"size": 100}).json()["items"]
        viewer_role = next(r["id"] for r in roles if "api.create" not in r["permissions"])
        invited = cp.post("/users", json={"email": VIEWER, "roleIds": [viewer_role]})
        assert invited.status_code == 201, invited.text
        token = invited.json()["invitation"]["token"]
    accepted = httpx.post(
        f"{console.control}/api/auth/accept-invitation",
        json={"token": token, "password": VIEWER_PASSWORD},
    )
    assert accepted.status_code in (200, 201), accepted.text

    sign_in(page, console, VIEWER, VIEWER_PASSWORD)
    page.get_by_role("link", name="APIs").click()
    add = page.get_by_role("button", name="Add Service")
    expect(add).to_be_disabled()
    page.get_by_label("Add Service needs the api.create permission").hover()
    expect(page.get_by_text("You need the api.create permission to add a service")).to_be_visible()

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="APIs").click()
    page.get_by_role("button", name="Add Service").click()
    form = page.get_by_role("form", name="Add Service")
    form.get_by_label("Name").fill(" orders")  # a leading space: the API refuses the name
    form.get_by_role("button", name="Create").click()
    expect(form.get_by_label("Name")).to_have_attribute("aria-invalid", "true")
    form.get_by_label("Name").fill("orders")
    form.get_by_role("button", name="Create").click()
    expect(page.get_by_role("table", name="APIs").get_by_role("row")).to_have_count(2)
    expect(page.get_by_role("table", name="APIs")).to_contain_text("orders")


def test_the_add_upstream_wizard(page: Page, console: Console) -> None:
    """The seed's wizard rules: Next needs Name and Environment on Overview, a node on
    Targets, and stays disabled while Service discovery is on; the API's refusal of a field
    is shown at that field; the created upstream is listed with its node and checks."""
    with console.management() as cp:
        env = cp.post("/envs", json={"name": "staging", "gatewayHosts": ["staging.example.com"]})
        assert env.status_code == 201, env.text

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Upstreams").click()
    page.get_by_role("button", name="Add Upstream").click()
    wizard = page.get_by_role("dialog", name="Add Upstream")
    next_step = wizard.get_by_role("button", name="Next")

    expect(next_step).to_be_disabled()
    wizard.get_by_label("Name").fill("orders-backend")
    expect(next_step).to_be_disabled()  # no environment yet
    wizard.get_by_label("Environment").click()
    page.get_by_role("option", name="staging").click()
    expect(next_step).to_be_enabled()
    next_step.click()

    expect(next_step).to_be_disabled()  # no node yet
    wizard.get_by_label("Host").fill("127.0.0.1")
    wizard.get_by_label("Port").fill("8080")
    wizard.get_by_role("button", name="Add node").click()
    expect(wizard.get_by_text("127.0.0.1:8080 (weight 1)")).to_be_visible()
    expect(next_step).to_be_enabled()
    wizard.get_by_label("Service discovery").check()
    expect(wizard.get_by_label("Host")).to_have_count(0)  # manual entry hidden
    expect(next_step).to_be_disabled()
    wizard.get_by_label("Service discovery").uncheck()
    next_step.click()

    wizard.get_by_label("Active checks").check()
    wizard.get_by_label("Probe path").fill("health")  # no leading '/': the API refuses it
    wizard.get_by_role("button", name="Create upstream").click()
    expect(wizard.get_by_label("Probe path")).to_have_attribute("aria-invalid", "true")
    wizard.get_by_label("Probe path").fill("/health")
    wizard.get_by_role("button", name="Create upstream").click()

    table = page.get_by_role("table", name="Upstreams")
    row = table.get_by_role("row").filter(has_text="orders-backend")
    expect(row).to_contain_text("127.0.0.1:8080")
    expect(row).to_contain_text("active")
    with console.management() as cp:
        [stored] = cp.get(f"/envs/{env.json()['id']}/upstreams").json()["items"]
    assert stored["specification"]["checks"]["active"]["http_path"] == "/health"
    assert stored["specification"]["nodes"] == [
        {**stored["specification"]["nodes"][0], "host": "127.0.0.1", "port": 8080, "weight": 1}
    ]


def test_the_add_upstream_wizard_with_service_discovery(page: Page, console: Console) -> None:
    """With Service discovery on, Targets asks for the discovery type and the service name
    instead of nodes (Next waits for the name); a name DNS cannot resolve is refused at that
    field; the upstream is created with ``discovery`` and listed with its service name."""
    with console.management() as cp:
        env = cp.post("/envs", json={"name": "edge", "gatewayHosts": ["edge.example.com"]})
        assert env.status_code == 201, env.text

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Upstreams").click()
    page.get_by_role("button", name="Add Upstream").click()
    wizard = page.get_by_role("dialog", name="Add Upstream")
    next_step = wizard.get_by_role("button", name="Next")
    wizard.get_by_label("Name").fill("orders-dns")
    wizard.get_by_label("Environment").click()
    page.get_by_role("option", name="edge").click()
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
    page: Page,
    console: Console,
    backend: int,  # noqa: F811
) -> None:
    """An API deployed at revision 1; in the console: clone it, compare the clone (changed by
    the API) with revision 1, dry-run it, deploy it (refused: revision 1 is live, the
    conflict explained), deploy it with force, and roll back to revision 1 the same way."""
    with console.management() as cp:
        deployed = deployed_api(
            cp, host="api.example.com", backend=backend, plugins={}, env_name="prod"
        )
        api = deployed["api"]

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="APIs").click()
    page.get_by_role("link", name="orders").click()
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

    outcome = page.get_by_role("status", name="Deploy outcome")
    page.get_by_role("button", name="Dry run").click()
    expect(outcome).to_contain_text("revision 2 can be deployed to prod")
    page.get_by_role("button", name="Deploy", exact=True).click()
    expect(outcome).to_contain_text("Environment already has revision 1 deployed")
    expect(outcome).to_contain_text("Deploying with force replaces it")
    outcome.get_by_role("button", name="Deploy with force").click()
    expect(outcome).not_to_contain_text("already has revision")
    live = revisions.get_by_role("row").filter(has_text="prod")
    expect(live).to_have_count(1)
    expect(live).to_contain_text("2")

    # the rollback: revision 1 again, with force
    page.get_by_role("combobox", name="Revision", exact=True).click()
    page.get_by_role("option", name="Revision 1").click()
    page.get_by_role("button", name="Deploy", exact=True).click()
    outcome.get_by_role("button", name="Deploy with force").click()
    expect(outcome).not_to_contain_text("already has revision")
    expect(revisions.get_by_role("row").filter(has_text="prod")).to_contain_text("ACTIVE")
    with console.management() as cp:
        [deployment] = cp.get(f"/apis/{api['id']}/deployments").json()["items"]
    assert deployment["revisionNumber"] == 1


def test_the_audit_log_shows_each_change_as_a_diff(page: Page, console: Console) -> None:
    with console.management() as cp:
        env = cp.post("/envs", json={"name": "edge", "gatewayHosts": ["old.example.com"]}).json()
        changed = cp.patch(f"/envs/{env['id']}", json={"gatewayHosts": ["new.example.com"]})
        assert changed.status_code == 200, changed.text

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Audit log").click()
    log = page.get_by_role("table", name="Audit log")
    update = log.get_by_role("row").filter(has_text="environment.update")
    expect(update).to_contain_text(OWNER)
    update.get_by_role("button", name="Show changes").click()
    changes = page.get_by_label("Changes of environment.update")
    expect(changes).to_contain_text('- "old.example.com"')
    expect(changes).to_contain_text('+ "new.example.com"')
    expect(changes).not_to_contain_text('- "name": "edge"')  # unchanged lines are context


def test_analytics_widgets_as_charts_and_the_empty_data_message(
    page: Page,
    console: Console,
    backend: int,  # noqa: F811
) -> None:
    """Traffic through the embedded gateway, then widgets over it: a number, a pie by
    status, and one filtered to an environment without traffic, which shows the seed's
    empty-data message; a line chart added through the form is drawn too."""
    with console.management() as cp:
        env = deployed_api(cp, host=SHOP, backend=backend, plugins={})["env"]
        quiet = cp.post("/envs", json={"name": "quiet", "gatewayHosts": ["quiet.example.com"]})

        # the embedded gateway runs the deploy once it reports the environment's version
        # (then every request below is one the widgets must count: exactly six)
        def live() -> bool:
            expected = cp.get(f"/envs/{env['id']}").json()["configVersion"]
            nodes = cp.get(f"/envs/{env['id']}/nodes").json()["items"]
            return any(node["configVersion"] == expected for node in nodes)

        wait_for(live)
        gateway = f"http://{console.env['PORTICO_GATEWAY_LISTEN']}/orders"
        for _ in range(6):
            assert httpx.get(gateway, headers={"Host": SHOP}).status_code == 200

        def widget(name: str, chart: str, **extra: object) -> str:
            body = {"name": name, "metric": "requests-count", "aggregation": "SUM"}
            body |= {"chart": chart, "filters": {"window": "1h"}, **extra}
            created = cp.post("/widgets", json=body)
            assert created.status_code == 201, created.text
            return str(created.json()["id"])

        total = widget("Requests", "number")
        by_status_id = widget("By status", "pie", dimensions=["response_status_code"])
        widget("Quiet", "number", filters={"window": "1h", "environmentId": quiet.json()["id"]})

        def shipped() -> bool:
            """All six requests counted by both widgets (the node ships in batches)."""
            value = cp.get(f"/widgets/{total}/data").json()["value"]
            grouped = cp.get(f"/widgets/{by_status_id}/data").json()["data"]
            return value == 6 and sum(row["value"] for row in grouped) == 6

        wait_for(shipped)
        statuses = cp.get(f"/widgets/{by_status_id}/data").json()["data"]

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Analytics").click()
    expect(page.get_by_label("Requests: value")).to_have_text("6")
    by_status = page.get_by_role("region", name="By status")
    expect(by_status.locator("svg .recharts-pie-sector")).to_have_count(len(statuses))
    expect(page.get_by_role("region", name="Quiet")).to_contain_text(
        "No data for the selected filters"
    )

    page.get_by_role("button", name="Add widget").click()
    form = page.get_by_role("form", name="Add widget")
    form.get_by_label("Name").fill("Over time")
    form.get_by_role("combobox", name="Chart").click()
    page.get_by_role("option", name="line", exact=True).click()
    form.get_by_role("button", name="Create widget").click()
    over_time = page.get_by_role("region", name="Over time")
    expect(over_time.locator("svg .recharts-line")).to_have_count(1)


def test_a_plugin_form_generated_from_its_schema(page: Page, console: Console) -> None:
    """limit-count added to an undeployed revision through the form the console generates
    from the gateway's JSON Schema: a value the schema refuses is shown at its field before
    anything is sent; the saved configuration is the revision's."""
    with console.management() as cp:
        api = cp.post("/apis", json={"name": "orders"}).json()
        body = {"serviceSpec": {"plugins": {}}, "routeSpec": [ROUTE], "environmentUpstreams": []}
        revision = cp.post(f"/apis/{api['id']}/revisions", json=body)
        assert revision.status_code == 201, revision.text

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="APIs").click()
    page.get_by_role("link", name="orders").click()
    page.get_by_role("combobox", name="Edit the plugins of").click()
    page.get_by_role("option", name="Revision 1 (INACTIVE)").click()
    page.get_by_role("combobox", name="Add plugin").fill("limit-count")
    page.get_by_role("option", name="limit-count").click()

    form = page.get_by_role("region", name="limit-count configuration")
    count = form.get_by_label("Count", exact=False).first
    count.fill("0")  # the schema: more than 0
    form.get_by_label("Time Window").fill("60")
    form.get_by_role("button", name="Save plugin").click()
    expect(form).to_contain_text("must be > 0")
    count.fill("5")
    form.get_by_role("button", name="Save plugin").click()
    expect(form).to_have_count(0)  # saved: the form closes
    expect(page.get_by_text('"count":5')).to_be_visible()

    with console.management() as cp:
        [stored] = cp.get(f"/apis/{api['id']}/revisions").json()["items"]
    config = stored["serviceSpec"]["plugins"]["limit-count"]
    assert (config["count"], config["time_window"]) == (5, 60)


def test_openapi_import_by_file_upload(page: Page, console: Console, tmp_path: Path) -> None:
    document = tmp_path / "orders.yaml"
    document.write_text(
        "openapi: 3.0.3\n"
        "info: {title: orders, version: '1.0'}\n"
        "paths:\n"
        "  /orders: {get: {responses: {'200': {description: ok}}}}\n"
        "  /orders/{id}: {get: {responses: {'200': {description: ok}}}}\n"
    )
    broken = tmp_path / "broken.json"
    broken.write_text('{"openapi": "3.0.3", "paths": {}}')  # no info: not a document

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="APIs").click()
    importer = page.get_by_role("button", name="Import OpenAPI")

    def choose(path: Path) -> None:
        with page.expect_file_chooser() as chooser:
            importer.click()
        chooser.value.set_files(path)

    choose(broken)
    expect(page.get_by_role("status")).to_contain_text("info")  # the API's refusal, named
    choose(document)
    expect(page.get_by_role("status")).to_contain_text("Imported orders: revision 1 with 2 routes")
    expect(page.get_by_role("table", name="APIs")).to_contain_text("orders")


def test_products_with_their_quota_and_developers(page: Page, console: Console) -> None:
    with console.management() as cp:
        api = cp.post("/apis", json={"name": "orders"}).json()
        quota = {"limit": 1000, "interval": 1, "interval_unit": "day"}
        body = {"name": "shop", "displayName": "Shop", "apiIds": [api["id"]], "quota": quota}
        assert cp.post("/products", json=body).status_code == 201
        free = {"name": "free", "apiIds": [api["id"]], "quota": {**quota, "limit": -1}}
        assert cp.post("/products", json=free).status_code == 201
        ada = {"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com"}
        assert cp.post("/developers", json=ada).status_code == 201

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Products").click()
    products = page.get_by_role("table", name="Products")
    shop = products.get_by_role("row").filter(has_text="Shop")
    expect(shop).to_contain_text("orders")
    expect(shop).to_contain_text("1,000 per day, per app")
    expect(products.get_by_role("row").filter(has_text="free")).to_contain_text("unlimited")
    developers = page.get_by_role("table", name="Developers")
    expect(developers.get_by_role("row").filter(has_text="Ada Lovelace")).to_contain_text(
        "ada@example.com"
    )


def test_access_users_roles_groups_and_consumers(page: Page, console: Console) -> None:
    secret = "a-consumer-key-nobody-should-see-0123"
    with console.management() as cp:
        consumer = {"username": "mobile", "plugins": {"key-auth": {"key": secret}}}
        created = cp.post("/consumers", json=consumer)
        assert created.status_code == 201, created.text
        assert cp.post("/groups", json={"name": "operators"}).status_code == 201

    sign_in(page, console, OWNER, OWNER_PASSWORD)
    page.get_by_role("link", name="Access").click()
    users = page.get_by_role("table", name="Users")
    expect(users.get_by_role("row").filter(has_text=OWNER)).to_have_count(1)
    roles = page.get_by_role("table", name="Roles")
    expect(roles.get_by_role("row").filter(has_text="predefined").first).to_be_visible()
    expect(page.get_by_role("table", name="Groups")).to_contain_text("operators")
    consumers = page.get_by_role("table", name="Consumers")
    expect(consumers.get_by_role("row").filter(has_text="mobile")).to_contain_text("key-auth")
    expect(page.get_by_text("No identity provider configured.")).to_be_visible()
    assert secret not in page.content()
