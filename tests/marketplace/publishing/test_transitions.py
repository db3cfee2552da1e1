"""``POST /publishing/transitions``: one editorial transition applied to many nodes, each
reported on its own; a refused item changes nothing and never undoes the others."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from portico.marketplace.node.models import Bundle, ModerationState
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.content.catalogue import Catalogue, failed, ids

S = ModerationState
PATH = url("/publishing/transitions")


async def test_a_bulk_transition_reports_each_item(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, manager: SiteAccount
) -> None:
    api = await catalogue.node(Bundle.APIS, state=S.IN_REVIEW)
    product = await catalogue.node(Bundle.API_PRODUCTS, state=S.IN_REVIEW)
    live = await catalogue.node(Bundle.APIS, state=S.PUBLISHED)
    page = await catalogue.node(Bundle.PAGE)
    missing = uuid.uuid4()
    answer = await admin_api.post(
        PATH,
        json={"nodes": ids(api, missing, live, product, page), "transition": "publish"},
        headers=manager.headers,
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [(r["id"], r["outcome"]) for r in body["data"]] == [
        (str(api), "applied"),
        (str(missing), "failed"),
        (str(live), "failed"),
        (str(product), "applied"),
        (str(page), "failed"),
    ]
    assert body["data"][0] == {
        "id": str(api),
        "outcome": "applied",
        "bundle": "apis",
        "moderation_state": "published",
        "published": True,
    }
    # a failed item reports the node as it stands
    assert body["data"][1] == {
        "id": str(missing),
        "outcome": "failed",
        "bundle": None,
        "moderation_state": None,
        "published": None,
    }
    assert body["data"][2]["moderation_state"] == "published"
    assert body["meta"]["count"] == 5
    refused = failed(body)
    assert set(refused) == {str(missing), str(live), str(page)}
    assert refused[str(missing)][0] == 404
    assert refused[str(live)][0] == 409
    assert "published" in refused[str(live)][1] and "'publish'" in refused[str(live)][1]
    assert refused[str(page)][0] == 409
    assert "page" in refused[str(page)][1]

    assert await catalogue.state(api) == (S.PUBLISHED, True)
    assert await catalogue.state(product) == (S.PUBLISHED, True)
    assert await catalogue.state(live) == (S.PUBLISHED, True)
    assert await catalogue.state(page) == (None, False)
    audited = await catalogue.audits("content.transition")
    assert sorted(e.entity_id for e in audited) == sorted(ids(api, product))
    assert {e.bundle for e in audited} == {"apis", "api_products"}


async def test_each_item_needs_the_transitions_permission(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, editor: SiteAccount
) -> None:
    drafts = [await catalogue.node(Bundle.APIS, state=S.DRAFT) for _ in range(2)]
    review = await catalogue.node(Bundle.API_PRODUCTS, state=S.IN_REVIEW)
    refused = await admin_api.post(
        PATH,
        json={"nodes": ids(review), "transition": "publish"},
        headers=editor.headers,
    )
    assert refused.status_code == 200, refused.text
    assert failed(refused.json()) == {
        str(review): (403, "missing permission 'use editorial transition publish'")
    }
    assert await catalogue.state(review) == (S.IN_REVIEW, False)

    submitted = await admin_api.post(
        PATH,
        json={"nodes": ids(*drafts, review), "transition": "submit_for_review"},
        headers=editor.headers,
    )
    body = submitted.json()
    assert [r["outcome"] for r in body["data"]] == ["applied", "applied", "failed"]
    assert failed(body)[str(review)][0] == 409  # in review already: the state refuses it
    for draft in drafts:
        assert await catalogue.state(draft) == (S.IN_REVIEW, False)


async def test_the_endpoint_needs_the_baseline_and_access_content(
    admin_api: httpx.AsyncClient,
    catalogue: Catalogue,
    site: SiteFactory,
    client_only: SiteAccount,
) -> None:
    """``access content`` is every account's (the authenticated role's); the baseline is not.
    Past them, each item needs the transition's permission."""
    node = await catalogue.node(Bundle.APIS, state=S.DRAFT)
    body = {"nodes": ids(node), "transition": "submit_for_review"}
    no_baseline = await site.account("content_editor")
    refused = await admin_api.post(PATH, json=body, headers=no_baseline.headers)
    assert refused.status_code == 403
    assert refused.json()["permission"] == "access marketplace admin api"
    answer = await admin_api.post(PATH, json=body, headers=client_only.headers)
    assert answer.status_code == 200
    assert failed(answer.json()) == {
        str(node): (403, "missing permission 'use editorial transition submit_for_review'")
    }
    assert await catalogue.state(node) == (S.DRAFT, False)


SOME = "0b6c5d3e-7d0c-4a3b-9d64-2f1f1b3f0c11"


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"nodes": [], "transition": "publish"}, "/nodes"),
        ({"nodes": [SOME] * 2, "transition": "publish"}, "/nodes/1"),
        ({"nodes": [str(uuid.UUID(int=i)) for i in range(501)], "transition": "publish"}, "/nodes"),
        ({"nodes": ["not-a-uuid"], "transition": "publish"}, "/nodes/0"),
        ({"nodes": [SOME], "transition": "promote"}, "/transition"),
        ({"nodes": [SOME]}, "/transition"),
        ({"transition": "publish"}, "/nodes"),
        ({"nodes": [SOME], "transition": "publish", "force": True}, "/force"),
    ],
)
async def test_bad_bodies_are_400_naming_the_field(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, body: dict[str, Any], pointer: str
) -> None:
    answer = await admin_api.post(PATH, json=body, headers=site_admin.headers)
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert [e["pointer"] for e in answer.json()["errors"]] == [pointer]
