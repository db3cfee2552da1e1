"""Reading accounts: ``/users`` (paging, sorting, filters), ``/users/pending``,
``/users/{user}`` and ``/users/{user}/roles``."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import httpx

from portico.core.account import AccountStatus
from portico.core.db.engine import Database
from portico.marketplace.user.models import ExternalIdentity
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.users.conftest import Patch

USER_FIELDS = {
    "id",
    "email",
    "display_name",
    "status",
    "status_reason",
    "roles",
    "identity",
    "created_at",
    "last_login_at",
    "status_changed_at",
}


def emails(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [u["email"] for u in response.json()["data"]]


async def test_list_sort_page_and_filter(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount, patch_user: Patch
) -> None:
    bob = await site.account("marketplace_admin", email="bob@example.com")
    await site.account(email="carol@example.com", status=AccountStatus.PENDING)
    await site.account(email="dave_100%@example.org", status=AccountStatus.BLOCKED)
    await patch_user(bob.id, last_login_at=datetime(2030, 1, 2, tzinfo=UTC))
    await patch_user(site_admin.id, last_login_at=datetime(2030, 1, 1, tzinfo=UTC))
    h = site_admin.headers

    async def query(suffix: str) -> list[str]:
        return emails(await client.get(url("/users" + suffix), headers=h))

    listed = await client.get(url("/users"), headers=h)
    everyone = ["bob@example.com", "carol@example.com", "dave_100%@example.org"]
    assert emails(listed) == [*everyone, "root@portal.example.com"]
    body = listed.json()
    assert body["meta"] == {"count": 4, "page": 1, "limit": 50, "pages": 1}
    assert body["links"]["prev"] is None and body["links"]["next"] is None
    bob_read = body["data"][0]
    assert set(bob_read) == USER_FIELDS
    assert bob_read["roles"] == [
        {"id": "authenticated", "label": "Authenticated user"},
        {"id": "marketplace_admin", "label": "Marketplace administrator"},
    ]
    assert bob_read["last_login_at"].startswith("2030-01-02T00:00:00")

    assert await query("?sort=-email&limit=2&page=2") == ["carol@example.com", "bob@example.com"]
    paged = await client.get(url("/users?sort=-email&limit=2&page=2"), headers=h)
    assert paged.json()["meta"] == {"count": 4, "page": 2, "limit": 2, "pages": 2}
    assert paged.json()["links"]["prev"] == "/api/admin/v1/users?sort=-email&limit=2&page=1"
    assert paged.json()["links"]["next"] is None
    assert await query("?page=3&limit=2") == []
    # never signed in counts as the earliest sign-in, on both stores
    assert await query("?sort=-last_login_at,email") == [
        "bob@example.com",
        "root@portal.example.com",
        "carol@example.com",
        "dave_100%@example.org",
    ]
    assert (await query("?sort=last_login_at,email"))[-2:] == [
        "root@portal.example.com",
        "bob@example.com",
    ]
    assert await query("?sort=status,email") == [
        "bob@example.com",
        "root@portal.example.com",
        "dave_100%@example.org",
        "carol@example.com",
    ]
    assert (await query("?sort=-created_at"))[0] == "dave_100%@example.org"

    assert await query("?filter[status]=pending") == ["carol@example.com"]
    assert await query("?filter[status]=rejected") == []
    # email: a case-insensitive substring; % and _ match only themselves
    assert await query("?filter[email]=EXAMPLE.COM") == [
        "bob@example.com",
        "carol@example.com",
        "root@portal.example.com",
    ]
    assert await query("?filter[email]=_100%25") == ["dave_100%@example.org"]
    assert await query("?filter[email]=b%25") == []
    assert await query("?filter[email]=o_") == []
    assert await query("?filter[role]=marketplace_admin") == ["bob@example.com"]
    assert await query("?filter[role]=administrator") == ["root@portal.example.com"]
    assert len(await query("?filter[role]=authenticated")) == 4
    assert await query("?filter[role]=anonymous") == []
    assert await query("?filter[role]=marketplace_admin&filter[status]=blocked") == []


async def test_bad_list_queries_are_400_naming_the_parameter(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    for path in ("/users", "/users/pending"):
        for query, parameter in (
            ("?filter[colour]=red", "filter[colour]"),
            ("?filter[role]=overlord", "filter[role]"),
            ("?filter[email]=%20", "filter[email]"),
            ("?sort=name", "sort"),
            ("?sort=-", "sort"),
            ("?page=0", "page"),
            ("?page=x", "page"),
            ("?limit=501", "limit"),
            ("?limit=0", "limit"),
            ("?size=10", "size"),
            ("?page=1&page=2", "page"),
            ("?page=%C2%B2", "page"),  # '²': a digit to str.isdigit(), not to int()
            ("?page=%D9%A1", "page"),  # '١', Arabic-Indic one
            ("?limit=%EF%BC%95", "limit"),  # '５', fullwidth five
            ("?sort=email,email", "sort"),
            ("?sort=email,-email", "sort"),
        ):
            response = await client.get(url(path + query), headers=site_admin.headers)
            assert response.status_code == 400, path + query
            assert response.headers["content-type"] == "application/problem+json"
            assert response.json()["errors"][0]["parameter"] == parameter, path + query
    bad_status = await client.get(url("/users?filter[status]=gone"), headers=site_admin.headers)
    assert bad_status.status_code == 400
    assert bad_status.json()["errors"] == [
        {
            "parameter": "filter[status]",
            "detail": "filter[status]: must be one of invited, pending, active, blocked, rejected",
        }
    ]
    # every bad value is named in the one 400
    both = await client.get(
        url("/users?filter[status]=gone&filter[email]=%20"), headers=site_admin.headers
    )
    assert both.status_code == 400
    assert both.json()["errors"] == [
        {
            "parameter": "filter[status]",
            "detail": "filter[status]: must be one of invited, pending, active, blocked, rejected",
        },
        {"parameter": "filter[email]", "detail": "filter[email]: must not be empty"},
    ]
    # the pending list is pending by definition
    fixed = await client.get(
        url("/users/pending?filter[status]=active"), headers=site_admin.headers
    )
    assert fixed.status_code == 400
    assert fixed.json()["errors"][0]["parameter"] == "filter[status]"


async def test_pending_oldest_first(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount, patch_user: Patch
) -> None:
    newer = await site.account(email="newer@example.com", status=AccountStatus.PENDING)
    older = await site.account(email="older@example.com", status=AccountStatus.PENDING)
    await site.account(email="active@example.com")
    await patch_user(older.id, created_at=datetime(2020, 1, 1, tzinfo=UTC))
    await patch_user(newer.id, created_at=datetime(2021, 1, 1, tzinfo=UTC))
    h = site_admin.headers
    listed = await client.get(url("/users/pending"), headers=h)
    assert emails(listed) == ["older@example.com", "newer@example.com"]
    assert listed.json()["meta"]["count"] == 2
    assert emails(await client.get(url("/users/pending?sort=-created_at"), headers=h)) == [
        "newer@example.com",
        "older@example.com",
    ]
    assert emails(await client.get(url("/users/pending?filter[email]=NEW"), headers=h)) == [
        "newer@example.com"
    ]


async def test_one_account(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount
) -> None:
    carol = await site.account("api_manager", email="carol@example.com")
    response = await client.get(url(f"/users/{carol.id}"), headers=site_admin.headers)
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert set(data) == USER_FIELDS
    assert data["id"] == str(carol.id)
    assert data["email"] == "carol@example.com" and data["display_name"] == "carol"
    assert data["status"] == "active" and data["status_reason"] is None
    assert [r["id"] for r in data["roles"]] == ["authenticated", "api_manager"]
    assert data["identity"] is None
    listed = await client.get(url("/users?filter[email]=carol"), headers=site_admin.headers)
    assert listed.json()["data"] == [data]


async def test_an_account_shows_its_identity_link(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount, database: Database
) -> None:
    linked = await site.account(email="linked@example.com")
    await site.account(email="unlinked@example.com")
    async with database.session() as session, session.begin():
        session.add(
            ExternalIdentity(
                id=uuid.uuid4(),
                user_id=linked.id,
                provider="firebase",
                subject="uid-42",
                linked_at=datetime(2030, 5, 6, 7, 8, 9, tzinfo=UTC),
            )
        )
    h = site_admin.headers
    one = await client.get(url(f"/users/{linked.id}"), headers=h)
    assert one.status_code == 200, one.text
    identity = one.json()["data"]["identity"]
    assert identity["provider"] == "firebase" and identity["subject"] == "uid-42"
    assert identity["linked_at"].startswith("2030-05-06T07:08:09")
    # the list shows each account's own link, loaded for the whole page
    listed = await client.get(url("/users?filter[email]=linked"), headers=h)
    by_email = {u["email"]: u["identity"] for u in listed.json()["data"]}
    assert by_email == {"linked@example.com": identity, "unlinked@example.com": None}
    # severed, it is gone from the account
    severed = await client.delete(url(f"/users/{linked.id}/firebase-identity"), headers=h)
    assert severed.status_code == 204
    after = await client.get(url(f"/users/{linked.id}"), headers=h)
    assert after.json()["data"]["identity"] is None


async def test_roles_and_effective_permissions(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount
) -> None:
    both = await site.account("marketplace_admin", "content_editor")
    response = await client.get(url(f"/users/{both.id}/roles"), headers=site_admin.headers)
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["roles"] == [
        {"id": "authenticated", "label": "Authenticated user"},
        {"id": "content_editor", "label": "Content editor"},
        {"id": "marketplace_admin", "label": "Marketplace administrator"},
    ]
    role = await client.get(url("/roles/marketplace_admin"), headers=site_admin.headers)
    # content_editor adds nothing marketplace_admin lacks: the union is marketplace_admin's
    assert data["permissions"] == [p["key"] for p in role.json()["data"]["permissions"]]

    root = await client.get(url(f"/users/{site_admin.id}/roles"), headers=site_admin.headers)
    catalogue = await client.get(url("/permissions"), headers=site_admin.headers)
    every = [p["key"] for g in catalogue.json()["data"] for p in g["permissions"]]
    assert [r["id"] for r in root.json()["data"]["roles"]] == ["authenticated", "administrator"]
    assert root.json()["data"]["permissions"] == every

    nobody = await site.account(status=AccountStatus.PENDING)
    plain = await client.get(url(f"/users/{nobody.id}/roles"), headers=site_admin.headers)
    assert plain.json()["data"] == {
        "roles": [{"id": "authenticated", "label": "Authenticated user"}],
        "permissions": ["access content"],
    }
