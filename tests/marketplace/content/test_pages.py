"""Pages: written with Portico's additions (``POST /content/page``, ``PATCH`` and ``DELETE
/content/page/{node}``), published and unpublished with ``/content/page/{node}/publish`` and
``/unpublish`` (no workflow)."""

from __future__ import annotations

import uuid

import httpx
import pytest

from portico.marketplace.node.models import Bundle, ModerationState
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.content.catalogue import Catalogue


async def test_a_page_is_created_unpublished_then_published_and_unpublished(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, editor: SiteAccount
) -> None:
    created = await admin_api.post(
        url("/content/page"),
        json={"title": "Getting started", "body": "# Welcome\n\nSign up first."},
        headers=editor.headers,
    )
    assert created.status_code == 201, created.text
    page = created.json()["data"]
    assert created.headers["location"] == url(f"/content/page/{page['id']}")
    assert page["bundle"] == "page"
    assert page["title"] == "Getting started"
    assert page["body"] == "# Welcome\n\nSign up first."
    assert page["published"] is False
    assert page["moderation_state"] is None
    assert page["transitions"] == []
    assert page["source"]["type"] == "custom"
    read = await admin_api.get(created.headers["location"], headers=editor.headers)
    assert read.json()["data"] == page
    node = uuid.UUID(page["id"])
    (entry,) = await catalogue.audits("content.create", node)
    assert entry.bundle == "page"
    assert entry.after["body"] == "# Welcome\n\nSign up first."
    assert entry.actor_id == editor.id

    for verb, published in (("publish", True), ("publish", True), ("unpublish", False)):
        answer = await admin_api.post(url(f"/content/page/{node}/{verb}"), headers=editor.headers)
        assert answer.status_code == 200, answer.text
        assert answer.json()["data"]["published"] is published
        assert await catalogue.state(node) == (None, published)
    # publishing a published page changed nothing, and recorded nothing
    (publish,) = await catalogue.audits("content.publish", node)
    assert (publish.before["published"], publish.after["published"]) == (False, True)
    (unpublish,) = await catalogue.audits("content.unpublish", node)
    assert (unpublish.before["published"], unpublish.after["published"]) == (True, False)
    again = await admin_api.post(url(f"/content/page/{node}/unpublish"), headers=editor.headers)
    assert again.status_code == 200
    assert len(await catalogue.audits("content.unpublish", node)) == 1


async def test_a_page_is_edited_and_deleted(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, manager: SiteAccount
) -> None:
    page = await catalogue.node(Bundle.PAGE, title="Old", description="old body")
    edited = await admin_api.patch(
        url(f"/content/page/{page}"), json={"title": "New"}, headers=manager.headers
    )
    assert edited.status_code == 200, edited.text
    assert (edited.json()["data"]["title"], edited.json()["data"]["body"]) == ("New", "old body")
    body = await admin_api.patch(
        url(f"/content/page/{page}"), json={"body": "", "title": None}, headers=manager.headers
    )
    assert (body.json()["data"]["title"], body.json()["data"]["body"]) == ("New", "")
    updates = await catalogue.audits("content.update", page)
    assert [(e.before["title"], e.after["title"]) for e in updates] == [
        ("Old", "New"),
        ("New", "New"),
    ]
    assert updates[1].before["body"] == "old body"
    # nothing to change: nothing recorded
    same = await admin_api.patch(url(f"/content/page/{page}"), json={}, headers=manager.headers)
    assert same.status_code == 200
    assert len(await catalogue.audits("content.update", page)) == 2

    deleted = await admin_api.delete(url(f"/content/page/{page}"), headers=manager.headers)
    assert deleted.status_code == 204
    assert deleted.content == b""
    assert await catalogue.load(page) is None
    (entry,) = await catalogue.audits("content.delete", page)
    assert entry.before["title"] == "New"
    assert entry.after is None
    gone = await admin_api.delete(url(f"/content/page/{page}"), headers=manager.headers)
    assert gone.status_code == 404


async def test_page_endpoints_touch_pages_only(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site_admin: SiteAccount
) -> None:
    api = await catalogue.node(Bundle.APIS, state=ModerationState.DRAFT, title="An API")
    for method, body in (("PATCH", {"title": "x"}), ("DELETE", None)):
        answer = await admin_api.request(
            method, url(f"/content/page/{api}"), json=body, headers=site_admin.headers
        )
        assert answer.status_code == 404, answer.text
    unknown = await admin_api.post(
        url(f"/content/page/{uuid.uuid4()}/publish"), headers=site_admin.headers
    )
    assert unknown.status_code == 404
    api_node = await catalogue.load(api)
    assert api_node is not None
    assert api_node.title == "An API"


async def test_page_permissions(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, client_only: SiteAccount
) -> None:
    """Reading needs the baseline alone; writing, publishing included, a page permission."""
    page = await catalogue.node(Bundle.PAGE)
    assert (
        await admin_api.get(url(f"/content/page/{page}"), headers=client_only.headers)
    ).status_code == 200
    cases = [
        ("POST", "/content/page", {"title": "t"}, "create page content"),
        ("PATCH", f"/content/page/{page}", {"title": "t"}, "edit any page content"),
        ("DELETE", f"/content/page/{page}", None, "delete any page content"),
        ("POST", f"/content/page/{page}/publish", None, "edit any page content"),
        ("POST", f"/content/page/{page}/unpublish", None, "edit any page content"),
    ]
    for method, path, body, permission in cases:
        answer = await admin_api.request(method, url(path), json=body, headers=client_only.headers)
        assert answer.status_code == 403, (method, path, answer.text)
        assert answer.json()["permission"] == permission
    assert await catalogue.state(page) == (None, False)


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({}, "/title"),
        ({"title": ""}, "/title"),
        ({"title": " padded "}, "/title"),
        ({"title": "x" * 256}, "/title"),
        ({"title": "a\u0007b"}, "/title"),
        ({"title": "ok", "body": 3}, "/body"),
        ({"title": "ok", "published": True}, "/published"),
    ],
)
async def test_bad_page_bodies_are_400_naming_the_field(
    admin_api: httpx.AsyncClient,
    catalogue: Catalogue,
    site_admin: SiteAccount,
    body: dict[str, object],
    pointer: str,
) -> None:
    answer = await admin_api.post(url("/content/page"), json=body, headers=site_admin.headers)
    assert answer.status_code == 400, answer.text
    assert [e["pointer"] for e in answer.json()["errors"]] == [pointer]
    assert await catalogue.audits("content.create") == []
