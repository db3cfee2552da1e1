"""The catalogue's lists follow the admin API's list contract: ``page``/``limit``, ``sort``
on title, created_at and updated_at, ``filter[search]`` in the title; anything else is a 400
naming the parameter; collections carry ``meta`` and ``links``."""

from __future__ import annotations

import httpx

from portico.marketplace.node.models import Visibility
from tests.marketplace.conftest import SiteFactory
from tests.portal.conftest import Catalogue, get, titles


async def test_pages_sorts_and_links(client: httpx.AsyncClient, catalogue: Catalogue) -> None:
    # Alpha is the oldest, Echo the newest: the date orders are the title order
    for age, title in enumerate(["Echo", "Delta", "Charlie", "Bravo", "Alpha"]):
        await catalogue.node(title, age=age)
    await catalogue.node("Hidden", visibility=Visibility.INTERNAL)

    first = await get(client, "/apis", limit=2)
    body = first.json()
    assert [a["title"] for a in body["data"]] == ["Alpha", "Bravo"]
    assert body["meta"] == {"count": 5, "page": 1, "limit": 2, "pages": 3}
    assert body["links"]["prev"] is None
    assert body["links"]["next"] == "/api/portal/v1/apis?limit=2&page=2"
    follow = await client.get(body["links"]["next"])
    assert [a["title"] for a in follow.json()["data"]] == ["Charlie", "Delta"]
    last = await get(client, "/apis", limit=2, page=3)
    assert [a["title"] for a in last.json()["data"]] == ["Echo"]
    assert last.json()["links"]["next"] is None
    beyond = await get(client, "/apis", limit=2, page=9)
    assert beyond.json()["data"] == [] and beyond.json()["meta"]["count"] == 5

    assert await titles(client, "/apis", sort="-title") == [
        "Echo",
        "Delta",
        "Charlie",
        "Bravo",
        "Alpha",
    ]
    assert await titles(client, "/apis", sort="-created_at") == [
        "Echo",
        "Delta",
        "Charlie",
        "Bravo",
        "Alpha",
    ]
    assert await titles(client, "/apis", sort="updated_at,title") == [
        "Alpha",
        "Bravo",
        "Charlie",
        "Delta",
        "Echo",
    ]
    # the list leaves the OpenAPI documents out
    assert "documentation" not in first.json()["data"][0]
    # nothing of the administration leaks out
    assert set(first.json()["data"][0]) == {
        "id",
        "title",
        "version",
        "overview",
        "organisation",
        "visibility",
        "created_at",
        "updated_at",
    }


async def test_search_in_titles_of_visible_nodes(
    client: httpx.AsyncClient, catalogue: Catalogue, site: SiteFactory
) -> None:
    await catalogue.node("Payments API")
    await catalogue.node("Pay later")
    await catalogue.node("Weather")
    await catalogue.node("Payroll", visibility=Visibility.INTERNAL)
    search = {"filter[search]": "PAY"}
    assert await titles(client, "/apis", **search) == ["Pay later", "Payments API"]
    someone = await site.account()
    assert await titles(client, "/apis", someone, **search) == [
        "Pay later",
        "Payments API",
        "Payroll",
    ]
    assert await titles(client, "/apis", **{"filter[search]": "ather"}) == ["Weather"]
    assert await titles(client, "/apis", **{"filter[search]": "zz"}) == []
    paged = await get(client, "/apis", someone, limit=1, page=2, sort="-title", **search)
    assert [a["title"] for a in paged.json()["data"]] == ["Payments API"]
    assert paged.json()["meta"]["count"] == 3


async def test_unknown_or_malformed_parameters_are_400_naming_them(
    client: httpx.AsyncClient, catalogue: Catalogue
) -> None:
    node = await catalogue.node("Alpha")
    for path, params, parameter in (
        ("/apis", {"filter[visibility]": "public"}, "filter[visibility]"),
        ("/apis", {"sort": "moderation_state"}, "sort"),
        ("/apis", {"limit": "501"}, "limit"),
        ("/apis", {"page": "0"}, "page"),
        ("/products", {"colour": "red"}, "colour"),
        (f"/apis/{node}", {"page": "2"}, "page"),
        ("/notifications", {"colour": "red"}, None),  # anonymous: the 401 comes first
    ):
        response = await get(client, path, **params)
        if parameter is None:
            assert response.status_code == 401
            continue
        assert response.status_code == 400, (path, params)
        assert [e["parameter"] for e in response.json()["errors"]] == [parameter]
