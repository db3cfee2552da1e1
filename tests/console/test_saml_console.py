"""Signing into the console through a real identity provider (the pysaml2 IdP of
``tests/support/samlidp.py``, its own key made by the fixture), in Debian's chromium: the
sign-in page offers "Sign in with <configuration name>" for the active configuration only,
the IdP's form signs the user in and posts back, and the console exchanges the one-time
code for its tokens. An email the organisation has not provisioned gets a page saying so."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.console.conftest import Console
from tests.support.samlidp import SamlIdp

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        os.environ.get("PORTICO_TEST_STORE") == "postgresql",
        reason="browser tests run under SQLite only (the API they call is tested on both)",
    ),
]

ALICE = "alice@example.com"
STRANGER = "stranger@example.com"
PASSWORD = "idp-password-1"


@pytest.fixture
def idp(tmp_path: Path) -> Iterator[SamlIdp]:
    users = {
        email: {
            "password": PASSWORD,
            "attributes": {"email": [email], "displayName": ["Alice Liddell"]},
        }
        for email in (ALICE, STRANGER)
    }
    with SamlIdp(tmp_path / "idp.log", tmp_path / "idp", users) as started:
        yield started


def configure(console: Console, idp: SamlIdp) -> None:
    with console.management() as cp:
        assert cp.post("/users", json={"email": ALICE}).status_code == 201
        body = {
            "entityId": idp.entity_id,
            "ssoUrl": idp.sso_url,
            "certificate": idp.certificate,
        }
        mappings = [
            {"attribute": "email", "userField": "email"},
            {"attribute": "displayName", "userField": "displayName"},
        ]
        made = cp.post(
            "/identity-providers", json={"name": "Test IdP", **body, "mappings": mappings}
        )
        assert made.status_code == 201, made.text
        # without mappings a configuration is inactive: not offered
        idle = cp.post("/identity-providers", json={"name": "Idle IdP", **body})
        assert idle.status_code == 201, idle.text


def through_the_idp(page: Page, console: Console, email: str) -> None:
    page.goto(console.url)
    expect(page.get_by_role("button", name="Sign in with Idle IdP")).to_have_count(0)
    page.get_by_role("button", name="Sign in with Test IdP").click()
    expect(page.get_by_role("heading", name="Test identity provider")).to_be_visible()
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Continue").click()


def test_sign_in_through_an_identity_provider(page: Page, console: Console, idp: SamlIdp) -> None:
    configure(console, idp)
    through_the_idp(page, console, ALICE)
    expect(page.get_by_role("heading", name="Environments")).to_be_visible()
    # the one-time code left the address bar; the tab holds the tokens
    assert "samlCode" not in page.url
    assert page.evaluate("() => sessionStorage.getItem('portico.console.tokens')") is not None

    page.context.clear_cookies()
    page.evaluate("() => sessionStorage.clear()")
    through_the_idp(page, console, STRANGER)
    expect(page.get_by_role("alert")).to_contain_text(
        f"{STRANGER} is not provisioned in the organisation"
    )
