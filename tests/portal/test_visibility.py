"""The catalogue shows each caller what its visibility lets it see: public nodes to
everyone, internal ones to any signed-in account, organisation ones to the active members
of an organisation of its audience (of a team, when the audience names one). A node the
caller may not see is 404, as one that does not exist; drafts are seen by nobody."""

from __future__ import annotations

import httpx

from portico.core.account import AccountStatus
from portico.marketplace.node.models import Bundle, ModerationState, Visibility
from portico.marketplace.organisation.models import MembershipStatus
from tests.marketplace.conftest import SiteFactory
from tests.portal.conftest import Audience, Catalogue, get, titles

ORG = Visibility.ORGANISATION


async def test_anonymous_callers_see_public_published_nodes_only(
    client: httpx.AsyncClient, catalogue: Catalogue, site: SiteFactory
) -> None:
    acme = await catalogue.organisation("Acme")
    public = await catalogue.node("Public")
    internal = await catalogue.node("Internal", visibility=Visibility.INTERNAL)
    members = await catalogue.node("Members", visibility=ORG, audiences=[Audience(acme)])
    draft = await catalogue.node("Draft", state=ModerationState.DRAFT)
    archived = await catalogue.node("Archived", state=ModerationState.ARCHIVED)

    assert await titles(client, "/apis") == ["Public"]
    one = await get(client, f"/apis/{public}")
    assert one.status_code == 200
    assert one.json()["data"]["documentation"]["info"]["title"] == "Pets"
    for hidden in (internal, members, draft, archived):
        response = await get(client, f"/apis/{hidden}")
        assert response.status_code == 404, hidden
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["detail"] == "API not found"

    # internal needs a signed-in account, any account; drafts stay hidden
    someone = await site.account()
    assert await titles(client, "/apis", someone) == ["Internal", "Public"]
    assert (await get(client, f"/apis/{internal}", someone)).status_code == 200
    assert (await get(client, f"/apis/{draft}", someone)).status_code == 404
    assert (await get(client, f"/apis/{members}", someone)).status_code == 404


async def test_organisation_nodes_are_shown_to_active_members_of_their_audience(
    client: httpx.AsyncClient, catalogue: Catalogue
) -> None:
    acme = await catalogue.organisation("Acme")
    globex = await catalogue.organisation("Globex")
    acme_only = await catalogue.node("Acme API", visibility=ORG, audiences=[Audience(acme)])
    both = await catalogue.node(
        "Shared API", visibility=ORG, audiences=[Audience(acme), Audience(globex)]
    )
    # an organisation-visible node without an audience is shown to nobody
    nobody = await catalogue.node("Orphan API", visibility=ORG)

    acme_member = await catalogue.member(acme)
    globex_member = await catalogue.member(globex)
    invited = await catalogue.member(acme, status=MembershipStatus.INVITED)
    pending = await catalogue.member(acme, status=MembershipStatus.PENDING)

    assert await titles(client, "/apis", acme_member) == ["Acme API", "Shared API"]
    assert await titles(client, "/apis", globex_member) == ["Shared API"]
    for outsider in (invited, pending):
        assert await titles(client, "/apis", outsider) == []
        assert (await get(client, f"/apis/{acme_only}", outsider)).status_code == 404
    assert (await get(client, f"/apis/{acme_only}", acme_member)).status_code == 200
    assert (await get(client, f"/apis/{acme_only}", globex_member)).status_code == 404
    assert (await get(client, f"/apis/{both}", globex_member)).status_code == 200
    assert (await get(client, f"/apis/{nobody}", acme_member)).status_code == 404
    assert (await get(client, f"/apis/{both}")).status_code == 404  # anonymous


async def test_a_team_audience_restricts_a_node_to_the_team(
    client: httpx.AsyncClient, catalogue: Catalogue
) -> None:
    acme = await catalogue.organisation("Acme")
    red = await catalogue.team(acme, "Red")
    blue = await catalogue.team(acme, "Blue")
    globex = await catalogue.organisation("Globex")
    red_only = await catalogue.node("Red API", visibility=ORG, audiences=[Audience(acme, red)])
    await catalogue.node("Acme API", visibility=ORG, audiences=[Audience(acme)])
    # a team of another organisation does not stand for this one's team of the same id
    await catalogue.node("Globex API", visibility=ORG, audiences=[Audience(globex, red)])

    in_red = await catalogue.member(acme, red)
    in_blue = await catalogue.member(acme, blue)
    in_none = await catalogue.member(acme)
    in_both = await catalogue.member(acme, red, blue)
    assert await titles(client, "/apis", in_red) == ["Acme API", "Red API"]
    assert await titles(client, "/apis", in_both) == ["Acme API", "Red API"]
    assert await titles(client, "/apis", in_blue) == ["Acme API"]
    assert await titles(client, "/apis", in_none) == ["Acme API"]
    assert (await get(client, f"/apis/{red_only}", in_red)).status_code == 200
    assert (await get(client, f"/apis/{red_only}", in_blue)).status_code == 404


async def test_products_list_only_the_apis_the_caller_may_see(
    client: httpx.AsyncClient, catalogue: Catalogue
) -> None:
    acme = await catalogue.organisation("Acme")
    public = await catalogue.node("Public API")
    private = await catalogue.node("Acme API", visibility=ORG, audiences=[Audience(acme)])
    draft = await catalogue.node("Draft API", state=ModerationState.DRAFT)
    product = await catalogue.node(
        "Bundle", bundle=Bundle.API_PRODUCTS, apis=[private, draft, public]
    )
    await catalogue.node(
        "Internal bundle", bundle=Bundle.API_PRODUCTS, visibility=Visibility.INTERNAL
    )

    anonymous = await get(client, f"/products/{product}")
    assert anonymous.status_code == 200
    assert [a["title"] for a in anonymous.json()["data"]["apis"]] == ["Public API"]
    member = await catalogue.member(acme)
    mine = await get(client, f"/products/{product}", member)
    assert [a["title"] for a in mine.json()["data"]["apis"]] == ["Acme API", "Public API"]
    listed = (await get(client, "/products", member)).json()["data"]
    assert [p["title"] for p in listed] == ["Bundle", "Internal bundle"]
    assert [a["title"] for a in listed[0]["apis"]] == ["Acme API", "Public API"]
    assert await titles(client, "/products") == ["Bundle"]
    # an API is not a product, nor the other way round
    assert (await get(client, f"/products/{public}")).status_code == 404
    assert (await get(client, f"/apis/{product}")).status_code == 404
    assert (await get(client, "/apis/not-a-uuid")).status_code == 404


async def test_a_token_that_is_sent_must_be_valid_even_where_none_is_needed(
    client: httpx.AsyncClient, catalogue: Catalogue, site: SiteFactory
) -> None:
    await catalogue.node("Public")
    blocked = await site.account(status=AccountStatus.BLOCKED)
    for headers in (
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        blocked.headers,
    ):
        response = await client.get("/api/portal/v1/apis", headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["content-type"] == "application/problem+json"
    me = await client.get("/api/portal/v1/me")
    assert me.status_code == 401


async def test_filter_by_owning_organisation(
    client: httpx.AsyncClient, catalogue: Catalogue
) -> None:
    acme = await catalogue.organisation("Acme")
    await catalogue.node("Acme public", organisation=acme)
    await catalogue.node("Other public")
    assert await titles(client, "/apis", **{"filter[organisation]": str(acme)}) == ["Acme public"]
    bad = await get(client, "/apis", **{"filter[organisation]": "acme"})
    assert bad.status_code == 400
    assert bad.json()["errors"] == [
        {
            "parameter": "filter[organisation]",
            "detail": "filter[organisation]: must be an organisation's id (a UUID)",
        }
    ]
