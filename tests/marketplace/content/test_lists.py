"""``GET /content/{bundle}`` and ``GET /content/moderated``: filters, sorts, pages, and the
query rules (an unknown or malformed parameter is a 400 naming it)."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from portico.marketplace.node.models import Bundle, ModerationState, SourceType
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.content.catalogue import Catalogue

S = ModerationState


def _titles(answer: httpx.Response) -> list[str]:
    assert answer.status_code == 200, answer.text
    return [n["title"] for n in answer.json()["data"]]


async def test_a_bundle_lists_its_nodes_only_with_filters(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site_admin: SiteAccount
) -> None:
    owner = await catalogue.organisation()
    connection = await catalogue.connection()
    await catalogue.node(Bundle.APIS, title="a-draft", state=S.DRAFT, organisation_id=owner)
    await catalogue.node(Bundle.APIS, title="b-live", state=S.PUBLISHED)
    await catalogue.node(
        Bundle.APIS,
        title="c-imported",
        state=S.IN_REVIEW,
        source=SourceType.IMPORTED,
        connection_id=connection,
    )
    await catalogue.node(Bundle.APIS, title="d-imported-elsewhere", source=SourceType.IMPORTED)
    await catalogue.node(Bundle.API_PRODUCTS, title="a-product", state=S.PUBLISHED)
    await catalogue.node(Bundle.PAGE, title="a-page", published=True)

    def listing(bundle: str, **params: str) -> object:
        return admin_api.get(url(f"/content/{bundle}"), params=params, headers=site_admin.headers)

    everything = await listing("apis")
    assert _titles(everything) == ["a-draft", "b-live", "c-imported", "d-imported-elsewhere"]
    assert everything.json()["meta"] == {"count": 4, "page": 1, "limit": 50, "pages": 1}
    assert _titles(await listing("api_products")) == ["a-product"]
    pages = await listing("page")
    assert _titles(pages) == ["a-page"]
    assert pages.json()["data"][0]["moderation_state"] is None
    assert set(pages.json()["data"][0]) == {
        "id",
        "bundle",
        "title",
        "organisation",
        "visibility",
        "moderation_state",
        "published",
        "source",
        "created_at",
        "updated_at",
    }

    cases = {
        "filter[moderation_state]=in_review": ["c-imported"],
        "filter[published]=true": ["b-live"],
        "filter[published]=false": ["a-draft", "c-imported", "d-imported-elsewhere"],
        "filter[source]=custom": ["a-draft", "b-live"],
        "filter[source]=imported": ["c-imported", "d-imported-elsewhere"],
        f"filter[source]={connection}": ["c-imported"],
        f"filter[organisation]={owner}": ["a-draft"],
        "filter[source]=imported&filter[published]=false&sort=-title": [
            "d-imported-elsewhere",
            "c-imported",
        ],
    }
    for query, expected in cases.items():
        answer = await admin_api.get(url(f"/content/apis?{query}"), headers=site_admin.headers)
        assert _titles(answer) == expected, query
    # a page has no state: filtering by one matches none
    assert _titles(await listing("page", **{"filter[moderation_state]": "draft"})) == []


async def test_sorts_and_pages(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site_admin: SiteAccount
) -> None:
    for index, title in enumerate(["delta", "alpha", "charlie", "bravo", "echo"]):
        await catalogue.node(Bundle.API_PRODUCTS, title=title, age=timedelta(hours=index))

    async def titles(**params: str) -> list[str]:
        answer = await admin_api.get(
            url("/content/api_products"), params=params, headers=site_admin.headers
        )
        return _titles(answer)

    assert await titles() == ["alpha", "bravo", "charlie", "delta", "echo"]
    assert await titles(sort="-title") == ["echo", "delta", "charlie", "bravo", "alpha"]
    assert await titles(sort="created_at") == ["delta", "alpha", "charlie", "bravo", "echo"]
    assert await titles(sort="-updated_at") == ["echo", "bravo", "charlie", "alpha", "delta"]
    second = await admin_api.get(
        url("/content/api_products"),
        params={"limit": "2", "page": "2"},
        headers=site_admin.headers,
    )
    assert _titles(second) == ["charlie", "delta"]
    body = second.json()
    assert body["meta"] == {"count": 5, "page": 2, "limit": 2, "pages": 3}
    assert body["links"]["next"].endswith("page=3")
    assert body["links"]["prev"].endswith("page=1")


async def test_moderated_lists_what_awaits_a_decision_in_every_bundle(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site_admin: SiteAccount
) -> None:
    owner = await catalogue.organisation()
    await catalogue.node(Bundle.APIS, title="late api", state=S.IN_REVIEW, age=timedelta(days=3))
    await catalogue.node(
        Bundle.API_PRODUCTS,
        title="early product",
        state=S.IN_REVIEW,
        age=timedelta(days=1),
        organisation_id=owner,
    )
    await catalogue.node(Bundle.APIS, title="middle api", state=S.IN_REVIEW, age=timedelta(days=2))
    for state in (S.DRAFT, S.PUBLISHED, S.ARCHIVED):
        await catalogue.node(Bundle.APIS, title=f"api {state.value}", state=state)
    await catalogue.node(Bundle.PAGE, title="a page")

    async def titles(query: str = "") -> list[str]:
        return _titles(
            await admin_api.get(url(f"/content/moderated{query}"), headers=site_admin.headers)
        )

    # the longest waiting first
    assert await titles() == ["early product", "middle api", "late api"]
    assert await titles("?filter[bundle]=apis") == ["middle api", "late api"]
    assert await titles("?filter[bundle]=api_products") == ["early product"]
    assert await titles(f"?filter[organisation]={owner}") == ["early product"]
    assert await titles("?sort=title") == ["early product", "late api", "middle api"]
    assert await titles("?filter[source]=imported") == []


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        ("/content/apis?filter[colour]=red", "filter[colour]"),
        ("/content/apis?filter[published]=yes", "filter[published]"),
        ("/content/apis?filter[moderation_state]=pending", "filter[moderation_state]"),
        ("/content/apis?filter[source]=elsewhere", "filter[source]"),
        ("/content/apis?filter[organisation]=acme", "filter[organisation]"),
        ("/content/apis?filter[bundle]=apis", "filter[bundle]"),
        ("/content/apis?sort=colour", "sort"),
        ("/content/apis?limit=501", "limit"),
        ("/content/apis?page=0", "page"),
        ("/content/moderated?filter[bundle]=page", "filter[bundle]"),
        ("/content/moderated?filter[moderation_state]=draft", "filter[moderation_state]"),
        ("/content/moderated?sort=-name", "sort"),
        ("/content/page?colour=red", "colour"),
    ],
)
async def test_bad_query_parameters_are_400_naming_them(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, path: str, parameter: str
) -> None:
    answer = await admin_api.get(url(path), headers=site_admin.headers)
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert [e["parameter"] for e in answer.json()["errors"]] == [parameter]


async def test_an_unknown_bundle_is_404_naming_it(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    answer = await admin_api.get(url("/content/articles"), headers=site_admin.headers)
    assert answer.status_code == 404
    assert answer.json()["detail"] == (
        "no content bundle 'articles'; the bundles are apis, api_products, page"
    )


async def test_content_needs_the_baseline_permission_only(
    admin_api: httpx.AsyncClient, site: SiteFactory, client_only: SiteAccount
) -> None:
    for path in ("/content/apis", "/content/moderated"):
        assert (await admin_api.get(url(path))).status_code == 401
        no_baseline = await site.account("content_editor")
        answer = await admin_api.get(url(path), headers=no_baseline.headers)
        assert answer.status_code == 403
        assert answer.json()["permission"] == "access marketplace admin api"
        assert (await admin_api.get(url(path), headers=client_only.headers)).status_code == 200
