"""The pages problem ``type`` URIs name, served at the control plane's root: every type any
error class can produce resolves to its title, status and what to do."""

from __future__ import annotations

import httpx

from portico.core.errors import PROBLEM_CONTENT_TYPE, PorticoError, TooManyRequests
from portico.core.problem_pages import catalogue, error_classes


def _all_types() -> dict[str, type[PorticoError]]:
    """Each ``type`` URI, with a class that produces it (the app fixture has imported every
    module of both surfaces, so every error class is loaded)."""
    return {f"/problems/{cls.kind}": cls for cls in error_classes()}


async def test_every_type_an_error_class_produces_resolves(
    client: httpx.AsyncClient, app: object
) -> None:
    types = _all_types()
    # the kinds of both surfaces, the kernel's and a domain's own, are all there
    assert {
        "/problems/not-found",
        "/problems/permission-denied",
        "/problems/validation",
        "/problems/too-many-requests",
        "/problems/token-issuance-disabled",
        "/problems/plugin-configuration",
    } <= set(types)
    for uri, cls in types.items():
        response = await client.get(uri)  # no credentials: documentation
        assert response.status_code == 200, uri
        page = response.json()["data"]
        assert page["type"] == uri
        assert (page["title"], page["status"]) == (cls.title, cls.status), uri
        assert len(page["description"]) > 40, uri
    # what the classes render is what the pages say
    example = TooManyRequests(3).to_problem()
    described = (await client.get(example["type"])).json()["data"]
    assert (described["title"], described["status"]) == (example["title"], example["status"])


def test_a_kind_means_one_status_and_title_and_has_its_own_description() -> None:
    """Subclasses refine the message, never what the type says; a class that introduces a
    kind explains it (else its page would repeat its parent's)."""
    for cls in error_classes():
        entry = catalogue()[cls.kind]
        assert (cls.status, cls.title) == (entry.status, entry.title), cls
        introduces = "kind" in vars(cls)
        assert not introduces or "description" in vars(cls), cls


async def test_the_index_lists_every_type_once(client: httpx.AsyncClient, app: object) -> None:
    response = await client.get("/problems")
    assert response.status_code == 200
    listed = [p["type"] for p in response.json()["data"]]
    assert listed == sorted(set(listed)) and set(listed) == set(_all_types())


async def test_unknown_kinds_are_404_problems(client: httpx.AsyncClient) -> None:
    response = await client.get("/problems/no-such-kind")
    assert response.status_code == 404
    assert response.headers["content-type"] == PROBLEM_CONTENT_TYPE
    assert response.json()["type"] == "/problems/not-found"
    assert response.json()["detail"] == "no such problem type"
    extra = await client.get("/problems?x=1")
    assert extra.status_code == 400
    assert extra.json()["errors"][0]["parameter"] == "x"


async def test_a_browser_gets_a_page(client: httpx.AsyncClient) -> None:
    response = await client.get("/problems/not-found", headers={"Accept": "text/html"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "Not Found" in response.text and "(404)" in response.text
    index = await client.get("/problems", headers={"Accept": "text/html,*/*;q=0.8"})
    assert 'id="permission-denied"' in index.text
