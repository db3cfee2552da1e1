"""``GET /apis`` and ``GET /products``: filters, sorts, pages, and the parameters refused."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.marketplace.catalogue import repository
from portico.marketplace.node.models import CatalogueNode, ModerationState, Visibility
from tests.marketplace.catalogue.conftest import (
    add_connection,
    new_api,
    new_product,
    refused,
)
from tests.marketplace.conftest import SiteAccount, url


async def restate(database: Database, node_id: str, **columns: Any) -> None:
    """Change a node's columns directly (moderation and publishing have endpoints of their
    own, not the catalogue's)."""
    async with database.session() as session, session.begin():
        node = await session.get(CatalogueNode, uuid.UUID(node_id))
        assert node is not None
        for name, value in columns.items():
            setattr(node, name, value)


async def titles(
    client: httpx.AsyncClient, who: SiteAccount, path: str, **params: str
) -> list[str]:
    response = await client.get(url(path), params=params, headers=who.headers)
    assert response.status_code == 200, response.text
    return [node["title"] for node in response.json()["data"]]


@pytest.fixture
async def catalogue(
    admin_api: httpx.AsyncClient,
    editor: SiteAccount,
    database: Database,
    clock: Clock,
    owner_org: uuid.UUID,
    other_org: uuid.UUID,
) -> dict[str, Any]:
    """Five APIs made a minute apart (Delta first), two of them imported from two
    connections, in various states; and a product."""
    first, second = await add_connection(database, "one"), await add_connection(database, "two")
    made: dict[str, Any] = {"connections": (first, second)}
    specs: list[tuple[str, dict[str, Any]]] = [
        ("Delta", {"organisation": str(owner_org)}),
        ("alpha", {"connection_id": str(first), "api_id": "a"}),
        ("Charlie", {"connection_id": str(second), "api_id": "c"}),
        ("bravo", {"organisation": str(other_org)}),
        ("Echo 100%_off", {}),
    ]
    for title, body in specs:
        made[title] = await new_api(admin_api, editor, title=title, **body)
        clock.advance(timedelta(minutes=1))
    await restate(
        database,
        made["alpha"]["id"],
        moderation_state=ModerationState.PUBLISHED,
        published=True,
        visibility=Visibility.PUBLIC,
    )
    await restate(database, made["Charlie"]["id"], moderation_state=ModerationState.IN_REVIEW)
    await restate(database, made["bravo"]["id"], moderation_state=ModerationState.ARCHIVED)
    made["product"] = await new_product(admin_api, editor, title="Gold")
    return made


async def test_the_default_order_is_by_title_and_products_are_apart(
    admin_api: httpx.AsyncClient, editor: SiteAccount, catalogue: dict[str, Any]
) -> None:
    listed = await titles(admin_api, editor, "/apis")
    # the store's collation: upper case before lower case on both stores' "C"-like orders
    assert sorted(listed) == sorted(["Delta", "alpha", "Charlie", "bravo", "Echo 100%_off"])
    assert listed == sorted(listed, key=lambda t: t.encode())
    assert await titles(admin_api, editor, "/products") == ["Gold"]


async def test_filter_source(
    admin_api: httpx.AsyncClient, editor: SiteAccount, catalogue: dict[str, Any]
) -> None:
    first, second = catalogue["connections"]
    assert set(await titles(admin_api, editor, "/apis", **{"filter[source]": "custom"})) == {
        "Delta",
        "bravo",
        "Echo 100%_off",
    }
    assert set(await titles(admin_api, editor, "/apis", **{"filter[source]": "imported"})) == {
        "alpha",
        "Charlie",
    }
    assert await titles(admin_api, editor, "/apis", **{"filter[source]": str(second)}) == [
        "Charlie"
    ]
    nobody = str(uuid.uuid4())
    assert await titles(admin_api, editor, "/apis", **{"filter[source]": nobody}) == []
    assert await titles(admin_api, editor, "/products", **{"filter[source]": "custom"}) == ["Gold"]
    assert await titles(admin_api, editor, "/products", **{"filter[source]": str(first)}) == []


async def test_filters_of_state_visibility_organisation_publication_and_title(
    admin_api: httpx.AsyncClient,
    editor: SiteAccount,
    catalogue: dict[str, Any],
    owner_org: uuid.UUID,
) -> None:
    def of(**params: str) -> Any:
        return titles(admin_api, editor, "/apis", **{f"filter[{k}]": v for k, v in params.items()})

    assert await of(moderation_state="in_review") == ["Charlie"]
    assert set(await of(moderation_state="draft")) == {"Delta", "Echo 100%_off"}
    assert await of(visibility="public") == ["alpha"]
    assert await of(organisation=str(owner_org)) == ["Delta"]
    assert await of(published="true") == ["alpha"]
    assert len(await of(published="false")) == 4
    assert await of(title="bravo") == ["bravo"]
    assert await of(title="Bravo") == []
    assert await of(moderation_state="draft", organisation=str(owner_org)) == ["Delta"]


@pytest.mark.parametrize("matches_alone", [True, False])
async def test_search_is_a_case_insensitive_substring_of_the_title(
    admin_api: httpx.AsyncClient,
    editor: SiteAccount,
    catalogue: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    matches_alone: bool,
) -> None:
    # a search matching few nodes pages through its matches alone, one matching many walks
    # the sort's order (repository.py): both give the same answers
    monkeypatch.setattr(repository, "SEARCH_SET", 5_000 if matches_alone else 0)

    def search(term: str) -> Any:
        return titles(admin_api, editor, "/apis", **{"filter[search]": term})

    assert await search("HARL") == ["Charlie"]
    assert set(await search("a")) == {"Delta", "alpha", "Charlie", "bravo"}
    # LIKE's wildcards are text here
    assert await search("100%_") == ["Echo 100%_off"]
    assert await search("%") == ["Echo 100%_off"]
    assert await search("_") == ["Echo 100%_off"]
    assert await search("zzz") == []
    for sort, expected in (
        ("-created_at", ["bravo", "Charlie", "alpha", "Delta"]),
        ("moderation_state", ["bravo", "Delta", "Charlie", "alpha"]),
    ):
        found = await titles(admin_api, editor, "/apis", sort=sort, **{"filter[search]": "A"})
        assert found == expected
        paged = [
            *await titles(
                admin_api, editor, "/apis", sort=sort, limit="3", **{"filter[search]": "A"}
            ),
            *await titles(
                admin_api,
                editor,
                "/apis",
                sort=sort,
                limit="3",
                page="2",
                **{"filter[search]": "A"},
            ),
        ]
        assert paged == expected
    beyond = await admin_api.get(
        url("/apis"),
        params={"filter[search]": "A", "page": "3", "limit": "2"},
        headers=editor.headers,
    )
    assert (beyond.json()["data"], beyond.json()["meta"]["count"]) == ([], 4)


async def test_search_folds_ascii_letters_only_on_both_stores(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    await new_api(admin_api, editor, title="Über Orders")
    await new_api(admin_api, editor, title="ÉTÉ")

    def search(term: str) -> Any:
        return titles(admin_api, editor, "/apis", **{"filter[search]": term})

    assert await search("üBER") == []
    assert await search("ÜBER") == ["Über Orders"]
    assert await search("Über orders") == ["Über Orders"]
    assert await search("été") == []
    assert await search("ÉtÉ") == ["ÉTÉ"]


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("created_at", ["Delta", "alpha", "Charlie", "bravo", "Echo 100%_off"]),
        ("-created_at", ["Echo 100%_off", "bravo", "Charlie", "alpha", "Delta"]),
        ("moderation_state", ["bravo", "Delta", "Echo 100%_off", "Charlie", "alpha"]),
        ("-moderation_state", ["alpha", "Charlie", "Echo 100%_off", "Delta", "bravo"]),
        ("moderation_state,-title", ["bravo", "Echo 100%_off", "Delta", "Charlie", "alpha"]),
        ("-title", ["bravo", "alpha", "Echo 100%_off", "Delta", "Charlie"]),
    ],
)
async def test_sorts(
    admin_api: httpx.AsyncClient,
    editor: SiteAccount,
    catalogue: dict[str, Any],
    sort: str,
    expected: list[str],
) -> None:
    assert await titles(admin_api, editor, "/apis", sort=sort) == expected


async def test_updated_at_follows_the_last_change(
    admin_api: httpx.AsyncClient, editor: SiteAccount, catalogue: dict[str, Any], clock: Clock
) -> None:
    clock.advance(timedelta(minutes=1))
    changed = await admin_api.patch(
        url(f"/apis/{catalogue['Delta']['id']}"), json={"version": "2"}, headers=editor.headers
    )
    assert changed.status_code == 200
    listed = await titles(admin_api, editor, "/apis", sort="-updated_at")
    assert listed[0] == "Delta"
    assert listed[1:] == ["Echo 100%_off", "bravo", "Charlie", "alpha"]


async def test_pages_meta_and_links(
    admin_api: httpx.AsyncClient, editor: SiteAccount, catalogue: dict[str, Any]
) -> None:
    seen: list[str] = []
    for page in (1, 2, 3):
        response = await admin_api.get(
            url("/apis"),
            params={"limit": "2", "page": str(page), "sort": "created_at"},
            headers=editor.headers,
        )
        body = response.json()
        assert body["meta"] == {"count": 5, "page": page, "limit": 2, "pages": 3}
        seen += [n["title"] for n in body["data"]]
    assert seen == ["Delta", "alpha", "Charlie", "bravo", "Echo 100%_off"]
    assert body["links"]["next"] is None
    assert body["links"]["prev"].endswith("page=2")
    filtered = await admin_api.get(
        url("/apis"), params={"filter[source]": "imported", "limit": "1"}, headers=editor.headers
    )
    assert filtered.json()["meta"] == {"count": 2, "page": 1, "limit": 1, "pages": 2}
    assert "filter%5Bsource%5D=imported" in filtered.json()["links"]["next"]
    beyond = await admin_api.get(url("/apis"), params={"page": "9"}, headers=editor.headers)
    assert beyond.json()["data"] == []
    assert beyond.json()["meta"]["count"] == 5


@pytest.mark.parametrize("path", ["/apis", "/products"])
@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("filter[source]", "elsewhere"),
        ("filter[source]", "CUSTOM"),
        ("filter[moderation_state]", "live"),
        ("filter[visibility]", "secret"),
        ("filter[organisation]", "not-a-uuid"),
        ("filter[published]", "yes"),
        ("filter[colour]", "red"),
        ("filter[bundle]", "page"),
        ("sort", "colour"),
        ("sort", "title,-title"),
        ("sort", "version"),
        ("limit", "0"),
        ("limit", "501"),
        ("page", "0"),
        ("page", "x"),
        ("search", "orders"),
    ],
)
async def test_bad_parameters_are_named(
    admin_api: httpx.AsyncClient, editor: SiteAccount, path: str, parameter: str, value: str
) -> None:
    response = await admin_api.get(url(path), params={parameter: value}, headers=editor.headers)
    problem = refused(response)
    assert [e["parameter"] for e in problem["errors"]] == [parameter]


async def test_several_bad_filters_are_named_together(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    response = await admin_api.get(
        url("/apis"),
        params={"filter[source]": "x", "filter[visibility]": "y", "filter[published]": "1"},
        headers=editor.headers,
    )
    assert refused(response)["errors"] == [
        {
            "parameter": "filter[source]",
            "detail": "filter[source]: must be custom, imported or a gateway connection's id",
        },
        {
            "parameter": "filter[visibility]",
            "detail": "filter[visibility]: must be one of public, internal, organisation",
        },
        {"parameter": "filter[published]", "detail": "filter[published]: must be true or false"},
    ]


@pytest.mark.parametrize(
    "sort",
    ["title", "-title", "created_at", "-updated_at", "moderation_state", "-moderation_state,title"],
)
async def test_pages_read_from_either_end_make_up_the_whole_list(
    admin_api: httpx.AsyncClient, editor: SiteAccount, catalogue: dict[str, Any], sort: str
) -> None:
    """Pages past the middle are read from the end (repository.py): page by page, the list
    is the one a single page shows, in the same order, for every sort."""
    whole = await titles(admin_api, editor, "/apis", sort=sort)
    for limit in ("2", "3", "4"):
        paged: list[str] = []
        for page in range(1, 4):
            paged += await titles(
                admin_api, editor, "/apis", sort=sort, limit=limit, page=str(page)
            )
        assert paged[: len(whole)] == whole, limit
