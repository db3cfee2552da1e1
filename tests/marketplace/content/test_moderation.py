"""The editorial workflow through ``/content/{bundle}/{node}/transitions``: every transition
from every state, who may apply which, and what a refusal leaves."""

from __future__ import annotations

import uuid

import httpx
import pytest

from portico.marketplace.node.models import Bundle, ModerationState, SourceType
from portico.marketplace.node.moderation import BY_ID, TRANSITIONS
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.content.catalogue import Catalogue

S = ModerationState
ALL_TRANSITIONS = [t.id for t in TRANSITIONS]
#: the workflow as the design draws it, written out independently of node/moderation.py
ALLOWED = {
    ("create_new_draft", S.DRAFT): S.DRAFT,
    ("create_new_draft", S.IN_REVIEW): S.DRAFT,
    ("create_new_draft", S.PUBLISHED): S.DRAFT,
    ("submit_for_review", S.DRAFT): S.IN_REVIEW,
    ("publish", S.IN_REVIEW): S.PUBLISHED,
    ("archive", S.PUBLISHED): S.ARCHIVED,
    ("restore_to_draft", S.ARCHIVED): S.DRAFT,
}


def _path(bundle: Bundle, node: uuid.UUID, rest: str = "") -> str:
    return url(f"/content/{bundle.value}/{node}{rest}")


@pytest.mark.parametrize("state", list(S))
@pytest.mark.parametrize("transition", ALL_TRANSITIONS)
async def test_every_transition_from_every_state(
    admin_api: httpx.AsyncClient,
    catalogue: Catalogue,
    site_admin: SiteAccount,
    transition: str,
    state: ModerationState,
) -> None:
    for bundle in (Bundle.APIS, Bundle.API_PRODUCTS):
        node = await catalogue.node(bundle, state=state)
        answer = await admin_api.post(
            _path(bundle, node, f"/transitions/{transition}"), headers=site_admin.headers
        )
        target = ALLOWED.get((transition, state))
        if target is None:
            assert answer.status_code == 409, answer.text
            problem = answer.json()
            assert problem["type"] == "/problems/conflict"
            assert state.value in problem["detail"]
            assert f"'{transition}'" in problem["detail"]
            assert await catalogue.state(node) == (state, state is S.PUBLISHED)
            assert await catalogue.audits("content.transition", node) == []
            continue
        assert answer.status_code == 200, answer.text
        data = answer.json()["data"]
        assert data["id"] == str(node)
        assert data["bundle"] == bundle.value
        assert data["moderation_state"] == target.value
        assert data["published"] is (target is S.PUBLISHED)
        # the administrator may apply whatever leaves the new state
        assert [t["id"] for t in data["transitions"]] == [
            t.id for t in TRANSITIONS if target in t.sources
        ]
        assert await catalogue.state(node) == (target, target is S.PUBLISHED)
        (entry,) = await catalogue.audits("content.transition", node)
        assert entry.bundle == bundle.value
        assert entry.module == "content"
        assert entry.entity_type == "node"
        assert entry.actor_id == site_admin.id
        assert entry.before["moderation_state"] == state.value
        assert entry.after["moderation_state"] == target.value
        assert entry.after["published"] is (target is S.PUBLISHED)
        assert transition in entry.summary


async def test_a_content_editor_may_submit_but_not_publish(
    admin_api: httpx.AsyncClient,
    catalogue: Catalogue,
    editor: SiteAccount,
    manager: SiteAccount,
) -> None:
    node = await catalogue.node(Bundle.APIS, state=S.DRAFT)
    offered = await admin_api.get(_path(Bundle.APIS, node, "/transitions"), headers=editor.headers)
    assert offered.status_code == 200, offered.text
    assert [t["id"] for t in offered.json()["data"]] == ["create_new_draft", "submit_for_review"]
    assert offered.json()["data"][1] == {
        "id": "submit_for_review",
        "label": "Submit for review",
        "target": "in_review",
        "permission": "use editorial transition submit_for_review",
    }

    submitted = await admin_api.post(
        _path(Bundle.APIS, node, "/transitions/submit_for_review"), headers=editor.headers
    )
    assert submitted.status_code == 200, submitted.text
    assert submitted.json()["data"]["moderation_state"] == "in_review"
    # what the editor may do now: take it back to draft, not publish it
    assert [t["id"] for t in submitted.json()["data"]["transitions"]] == ["create_new_draft"]

    refused = await admin_api.post(
        _path(Bundle.APIS, node, "/transitions/publish"), headers=editor.headers
    )
    assert refused.status_code == 403, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["detail"] == "missing permission 'use editorial transition publish'"
    assert refused.json()["permission"] == "use editorial transition publish"
    assert await catalogue.state(node) == (S.IN_REVIEW, False)

    # the manager sees publish among its transitions, and applies it
    seen = await admin_api.get(_path(Bundle.APIS, node), headers=manager.headers)
    assert [t["id"] for t in seen.json()["data"]["transitions"]] == [
        "create_new_draft",
        "publish",
    ]
    published = await admin_api.post(
        _path(Bundle.APIS, node, "/transitions/publish"), headers=manager.headers
    )
    assert published.status_code == 200, published.text
    assert published.json()["data"]["published"] is True
    # and the editor cannot archive it, though it may take it back to draft
    for transition, status in (("archive", 403), ("create_new_draft", 200)):
        answer = await admin_api.post(
            _path(Bundle.APIS, node, f"/transitions/{transition}"), headers=editor.headers
        )
        assert answer.status_code == status, (transition, answer.text)
    assert await catalogue.state(node) == (S.DRAFT, False)
    actors = [e.actor_id for e in await catalogue.audits("content.transition", node)]
    assert actors == [editor.id, manager.id, editor.id]


async def test_a_missing_permission_is_403_before_the_state_is_looked_at(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, client_only: SiteAccount
) -> None:
    """A caller with the baseline alone is offered nothing, and refused with the permission
    even where the state would refuse too."""
    node = await catalogue.node(Bundle.API_PRODUCTS, state=S.ARCHIVED)
    offered = await admin_api.get(
        _path(Bundle.API_PRODUCTS, node, "/transitions"), headers=client_only.headers
    )
    assert offered.json() == {"data": []}
    for transition in ALL_TRANSITIONS:
        answer = await admin_api.post(
            _path(Bundle.API_PRODUCTS, node, f"/transitions/{transition}"),
            headers=client_only.headers,
        )
        assert answer.status_code == 403, answer.text
        assert answer.json()["permission"] == BY_ID[transition].permission


async def test_unknown_transitions_nodes_and_bundles_are_404(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site_admin: SiteAccount
) -> None:
    api = await catalogue.node(Bundle.APIS, state=S.DRAFT)
    unknown = await admin_api.post(
        _path(Bundle.APIS, api, "/transitions/promote"), headers=site_admin.headers
    )
    assert unknown.status_code == 404
    assert unknown.headers["content-type"] == "application/problem+json"
    assert "'promote'" in unknown.json()["detail"]
    assert "submit_for_review" in unknown.json()["detail"]  # the ones that exist
    for path in (
        f"/content/apis/{uuid.uuid4()}/transitions/publish",
        f"/content/apis/{uuid.uuid4()}/transitions",
        f"/content/apis/{uuid.uuid4()}",
        "/content/apis/not-a-uuid/transitions/publish",
        f"/content/api_products/{api}/transitions/submit_for_review",  # an API, not a product
        f"/content/page/{api}",
    ):
        method = "POST" if path.endswith("publish") or "submit" in path else "GET"
        answer = await admin_api.request(method, url(path), headers=site_admin.headers)
        assert answer.status_code == 404, (path, answer.text)
    widgets = await admin_api.get(url(f"/content/widgets/{api}"), headers=site_admin.headers)
    assert widgets.status_code == 404
    assert "'widgets'" in widgets.json()["detail"]
    assert "apis, api_products, page" in widgets.json()["detail"]
    assert await catalogue.state(api) == (S.DRAFT, False)


async def test_moderated_nodes_refuse_publish_and_unpublish(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site_admin: SiteAccount
) -> None:
    draft = await catalogue.node(Bundle.APIS, state=S.DRAFT)
    refused = await admin_api.post(
        _path(Bundle.APIS, draft, "/publish"), headers=site_admin.headers
    )
    assert refused.status_code == 409, refused.text
    detail = refused.json()["detail"]
    assert "under editorial moderation" in detail
    assert "it is draft" in detail
    assert "'publish' (from in_review)" in detail
    assert f"/content/apis/{draft}/transitions/" in detail

    live = await catalogue.node(Bundle.API_PRODUCTS, state=S.PUBLISHED)
    refused = await admin_api.post(
        _path(Bundle.API_PRODUCTS, live, "/unpublish"), headers=site_admin.headers
    )
    assert refused.status_code == 409, refused.text
    detail = refused.json()["detail"]
    assert "'archive' (from published)" in detail
    assert "'create_new_draft'" in detail
    assert await catalogue.state(draft) == (S.DRAFT, False)
    assert await catalogue.state(live) == (S.PUBLISHED, True)
    assert await catalogue.audits("content.publish") == []
    assert await catalogue.audits("content.unpublish") == []


async def test_pages_have_no_transitions(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site_admin: SiteAccount
) -> None:
    page = await catalogue.node(Bundle.PAGE, description="# Hello")
    read = await admin_api.get(_path(Bundle.PAGE, page), headers=site_admin.headers)
    assert read.status_code == 200, read.text
    data = read.json()["data"]
    assert data["moderation_state"] is None
    assert data["transitions"] == []
    assert data["body"] == "# Hello"
    listed = await admin_api.get(
        _path(Bundle.PAGE, page, "/transitions"), headers=site_admin.headers
    )
    assert listed.json() == {"data": []}
    for transition in ALL_TRANSITIONS:
        answer = await admin_api.post(
            _path(Bundle.PAGE, page, f"/transitions/{transition}"), headers=site_admin.headers
        )
        assert answer.status_code == 409, answer.text
        assert "not under editorial moderation" in answer.json()["detail"]
    assert await catalogue.state(page) == (None, False)


async def test_a_node_reads_with_its_source_and_only_the_callers_transitions(
    admin_api: httpx.AsyncClient,
    catalogue: Catalogue,
    editor: SiteAccount,
    manager: SiteAccount,
) -> None:
    organisation = await catalogue.organisation()
    connection = await catalogue.connection()
    node = await catalogue.node(
        Bundle.APIS,
        title="Orders",
        state=S.PUBLISHED,
        source=SourceType.IMPORTED,
        connection_id=connection,
        organisation_id=organisation,
    )
    by_manager = (await admin_api.get(_path(Bundle.APIS, node), headers=manager.headers)).json()
    by_editor = (await admin_api.get(_path(Bundle.APIS, node), headers=editor.headers)).json()
    assert [t["id"] for t in by_manager["data"]["transitions"]] == ["create_new_draft", "archive"]
    assert [t["id"] for t in by_editor["data"]["transitions"]] == ["create_new_draft"]
    data = by_manager["data"]
    assert data["title"] == "Orders"
    assert data["organisation"] == str(organisation)
    assert data["visibility"] == "internal"
    assert data["body"] is None
    assert data["source"]["type"] == "imported"
    assert data["source"]["connection_id"] == str(connection)
