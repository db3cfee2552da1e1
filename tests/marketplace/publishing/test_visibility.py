"""``POST /publishing/visibility``: public, internal, or organisation (optionally through
teams) on many nodes; organisation visibility replaces the audience whole."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from portico.marketplace.node.models import Bundle, ModerationState, Visibility
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.content.catalogue import API_EDITOR, Catalogue, failed, ids

PATH = url("/publishing/visibility")


async def test_organisation_visibility_sets_the_audience_and_public_clears_it(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, manager: SiteAccount
) -> None:
    acme, globex = await catalogue.organisation(), await catalogue.organisation()
    api = await catalogue.node(Bundle.APIS, state=ModerationState.PUBLISHED)
    product = await catalogue.node(Bundle.API_PRODUCTS, visibility=Visibility.PUBLIC)
    page = await catalogue.node(Bundle.PAGE)
    missing = uuid.uuid4()
    answer = await admin_api.post(
        PATH,
        json={
            "nodes": ids(api, product, missing, page),
            "visibility": "organisation",
            "organisations": ids(acme, globex),
        },
        headers=manager.headers,
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [r["outcome"] for r in body["data"]] == ["applied", "applied", "failed", "applied"]
    assert failed(body) == {str(missing): (404, f"no node has the id {missing}")}
    whole = sorted(
        [{"organisation": str(acme), "team": None}, {"organisation": str(globex), "team": None}],
        key=lambda a: a["organisation"],
    )
    assert body["data"][0] == {
        "id": str(api),
        "outcome": "applied",
        "bundle": "apis",
        "visibility": "organisation",
        "audience": whole,
    }
    assert body["data"][2]["visibility"] is None
    for node in (api, product, page):
        loaded = await catalogue.load(node)
        assert loaded is not None
        assert loaded.visibility is Visibility.ORGANISATION
        assert await catalogue.audience(node) == {(acme, None), (globex, None)}
    (entry,) = await catalogue.audits("content.visibility", product)
    assert entry.bundle == "api_products"
    assert entry.before == {"visibility": "public", "audience": []}
    assert entry.after == {"visibility": "organisation", "audience": whole}

    opened = await admin_api.post(
        PATH, json={"nodes": ids(api), "visibility": "public"}, headers=manager.headers
    )
    assert opened.json()["data"][0]["audience"] == []
    assert await catalogue.audience(api) == set()
    loaded = await catalogue.load(api)
    assert loaded is not None
    assert loaded.visibility is Visibility.PUBLIC
    assert loaded.moderation_state is ModerationState.PUBLISHED  # visibility only


async def test_teams_restrict_their_organisation_until_organisation_visibility_is_chosen_again(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, manager: SiteAccount
) -> None:
    acme, globex = await catalogue.organisation(), await catalogue.organisation()
    builders, testers = await catalogue.team(acme), await catalogue.team(acme)
    api = await catalogue.node(Bundle.APIS)
    restricted = await admin_api.post(
        PATH,
        json={
            "nodes": ids(api),
            "visibility": "organisation",
            "organisations": ids(acme, globex),
            "teams": ids(builders, testers),
        },
        headers=manager.headers,
    )
    assert restricted.status_code == 200, restricted.text
    assert await catalogue.audience(api) == {(acme, builders), (acme, testers), (globex, None)}
    audience = restricted.json()["data"][0]["audience"]
    assert {(a["organisation"], a["team"]) for a in audience} == {
        (str(acme), str(builders)),
        (str(acme), str(testers)),
        (str(globex), None),
    }

    # organisation visibility again, without teams: the restriction is cleared
    cleared = await admin_api.post(
        PATH,
        json={"nodes": ids(api), "visibility": "organisation", "organisations": ids(acme)},
        headers=manager.headers,
    )
    assert cleared.json()["data"][0]["outcome"] == "applied"
    assert await catalogue.audience(api) == {(acme, None)}
    entries = await catalogue.audits("content.visibility", api)
    assert len(entries) == 2
    assert len(entries[1].before["audience"]) == 3
    assert entries[1].after["audience"] == [{"organisation": str(acme), "team": None}]


async def test_the_same_visibility_again_is_unchanged_and_not_recorded(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, manager: SiteAccount
) -> None:
    acme = await catalogue.organisation()
    api = await catalogue.node(Bundle.APIS, visibility=Visibility.INTERNAL)
    body = {"nodes": ids(api), "visibility": "internal"}
    answer = await admin_api.post(PATH, json=body, headers=manager.headers)
    assert answer.json()["data"][0]["outcome"] == "unchanged"
    scoped = {"nodes": ids(api), "visibility": "organisation", "organisations": ids(acme)}
    for outcome in ("applied", "unchanged"):
        answer = await admin_api.post(PATH, json=scoped, headers=manager.headers)
        assert answer.json()["data"][0]["outcome"] == outcome
    assert len(await catalogue.audits("content.visibility", api)) == 1


async def test_each_item_needs_edit_permission_on_its_bundle(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site: SiteFactory
) -> None:
    apis_editor = await site.account(API_EDITOR)
    api = await catalogue.node(Bundle.APIS)
    product = await catalogue.node(Bundle.API_PRODUCTS)
    page = await catalogue.node(Bundle.PAGE)
    answer = await admin_api.post(
        PATH,
        json={"nodes": ids(product, api, page), "visibility": "public"},
        headers=apis_editor.headers,
    )
    assert answer.status_code == 200, answer.text
    assert [r["outcome"] for r in answer.json()["data"]] == ["failed", "applied", "failed"]
    assert failed(answer.json()) == {
        str(product): (403, "missing permission 'edit any api_products content'"),
        str(page): (403, "missing permission 'edit any page content'"),
    }
    # a refused item reports the node as it stands
    assert answer.json()["data"][0]["visibility"] == "internal"
    for node, visibility in ((api, "public"), (product, "internal"), (page, "internal")):
        loaded = await catalogue.load(node)
        assert loaded is not None
        assert loaded.visibility.value == visibility
    assert [e.entity_id for e in await catalogue.audits("content.visibility")] == [str(api)]


async def test_organisations_and_teams_that_do_not_fit_refuse_the_whole_request(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, manager: SiteAccount
) -> None:
    acme, globex = await catalogue.organisation(), await catalogue.organisation()
    globex_team = await catalogue.team(globex)
    api = await catalogue.node(Bundle.APIS)
    await catalogue.show_to(api, acme)
    ghost = uuid.uuid4()
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"organisations": ids(acme, ghost)}, ["/organisations/1"]),
        ({"organisations": ids(acme), "teams": ids(globex_team)}, ["/teams/0"]),
        ({"organisations": ids(acme), "teams": ids(ghost)}, ["/teams/0"]),
    ]
    for extra, pointers in cases:
        answer = await admin_api.post(
            PATH,
            json={"nodes": ids(api), "visibility": "organisation", **extra},
            headers=manager.headers,
        )
        assert answer.status_code == 400, answer.text
        assert [e["pointer"] for e in answer.json()["errors"]] == pointers
        assert str(ghost) in answer.text or str(globex_team) in answer.text
    assert await catalogue.audience(api) == {(acme, None)}
    assert await catalogue.audits("content.visibility") == []


SOME = "0b6c5d3e-7d0c-4a3b-9d64-2f1f1b3f0c11"


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"nodes": [SOME], "visibility": "organisation"}, "/organisations"),
        ({"nodes": [SOME], "visibility": "organisation", "organisations": []}, "/organisations"),
        ({"nodes": [SOME], "visibility": "organisation", "organisations": None}, "/organisations"),
        (
            {"nodes": [SOME], "visibility": "organisation", "organisations": [SOME, SOME]},
            "/organisations/1",
        ),
        (
            {"nodes": [SOME], "visibility": "organisation", "organisations": [SOME], "teams": None},
            "/teams",
        ),
        ({"nodes": [SOME], "visibility": "public", "organisations": [SOME]}, "/organisations"),
        ({"nodes": [SOME], "visibility": "public", "organisations": None}, "/organisations"),
        ({"nodes": [SOME], "visibility": "internal", "teams": [SOME]}, "/teams"),
        ({"nodes": [SOME], "visibility": "secret"}, "/visibility"),
        ({"nodes": [SOME]}, "/visibility"),
        ({"nodes": [], "visibility": "public"}, "/nodes"),
        ({"nodes": [SOME, SOME], "visibility": "public"}, "/nodes/1"),
        (
            {"nodes": [SOME] + [str(uuid.UUID(int=i)) for i in range(500)], "visibility": "public"},
            "/nodes",
        ),
    ],
)
async def test_bad_bodies_are_400_naming_the_field(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, body: dict[str, Any], pointer: str
) -> None:
    answer = await admin_api.post(PATH, json=body, headers=site_admin.headers)
    assert answer.status_code == 400, answer.text
    assert [e["pointer"] for e in answer.json()["errors"]] == [pointer]
