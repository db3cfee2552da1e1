"""GET /events and GET /events/{event}: the shape, the marketplace surface only, filters,
sort, paging, and every refusal."""

from __future__ import annotations

import uuid

import httpx
import pytest

from portico.core.account import User
from portico.core.audit import Actor
from portico.core.db.engine import Database
from portico.marketplace.access import SiteCaller
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.events.conftest import EventWriter, at

PERMISSION = "view marketplace audit log"
ROUTES = ("/events", "/events/export", "/events/stats", "/events/types")


async def test_an_event_written_by_a_site_caller_reads_back_whole(
    client: httpx.AsyncClient, site_admin: SiteAccount, database: Database
) -> None:
    async with database.session() as session, session.begin():
        user = await session.get(User, site_admin.id)
        assert user is not None
        caller = SiteCaller(
            user=user, roles=[], permissions=frozenset(), request_id="req-7", ip="203.0.113.9"
        )
        await caller.audit(
            session,
            "user.approve",
            entity_type="user",
            entity_id="u-1",
            module="user",
            summary="approved dev@example.com",
            before={"status": "pending", "password": "hunter2"},
            after={"status": "active"},
        )
    listed = await client.get(url("/events"), headers=site_admin.headers)
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert body["meta"] == {"count": 1, "page": 1, "limit": 50, "pages": 1}
    event = body["data"][0]
    assert set(event) == {
        "id", "occurred_at", "operation", "entity_type", "entity_id", "bundle", "module",
        "summary", "actor", "ip", "request_id", "before", "after",
    }  # fmt: skip
    assert event["operation"] == "user.approve"
    assert event["entity_type"] == "user" and event["entity_id"] == "u-1"
    assert event["module"] == "user" and event["bundle"] is None
    assert event["actor"] == {"id": str(site_admin.id), "email": site_admin.email, "kind": "user"}
    assert event["ip"] == "203.0.113.9" and event["request_id"] == "req-7"
    assert event["before"]["status"] == "pending"
    assert event["before"]["password"] != "hunter2"  # redacted by the writer
    assert event["after"] == {"status": "active"}
    assert event["occurred_at"].endswith("Z")

    one = await client.get(url(f"/events/{event['id']}"), headers=site_admin.headers)
    assert one.status_code == 200
    assert one.json() == {"data": event}


async def test_management_events_never_appear(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter
) -> None:
    mine = await write("user.block")
    theirs = await write("environment.create", entity_type="environment", surface="management")
    listed = (await client.get(url("/events"), headers=site_admin.headers)).json()
    assert [e["id"] for e in listed["data"]] == [str(mine)]
    hidden = await client.get(url(f"/events/{theirs}"), headers=site_admin.headers)
    assert hidden.status_code == 404
    assert hidden.json()["type"] == "/problems/not-found"
    assert hidden.json()["detail"] == "event not found"
    for path in ("/events/export", "/events/stats", "/events/types"):
        text = (await client.get(url(path), headers=site_admin.headers)).text
        assert "environment" not in text, path


async def test_unknown_and_malformed_ids_are_404(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    for raw in (str(uuid.uuid4()), "not-a-uuid", "1"):
        response = await client.get(url(f"/events/{raw}"), headers=site_admin.headers)
        assert response.status_code == 404, raw
        assert response.headers["content-type"] == "application/problem+json"


async def test_every_route_needs_a_token_and_the_permission(
    client: httpx.AsyncClient, site: SiteFactory, write: EventWriter
) -> None:
    event = await write()
    paths = (*ROUTES, f"/events/{event}")
    editor = await site.account("content_editor")  # no baseline, no audit permission
    manager = await site.account("api_manager")  # the baseline, not the audit log
    plain = await site.account()
    reader = await site.account("marketplace_admin")
    for path in paths:
        anonymous = await client.get(url(path))
        assert anonymous.status_code == 401, path
        assert anonymous.json()["type"] == "/problems/unauthorized"
        for account, missing in (
            (plain, "access marketplace admin api"),
            (editor, "access marketplace admin api"),
            (manager, PERMISSION),
        ):
            denied = await client.get(url(path), headers=account.headers)
            assert denied.status_code == 403, path
            assert denied.json()["detail"] == f"missing permission '{missing}'"
        allowed = await client.get(url(path), headers=reader.headers)
        assert allowed.status_code == 200, (path, allowed.text)


async def test_newest_first_with_ties_broken_by_id(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter
) -> None:
    same = at("2025-03-01T10:00:00Z")
    ids = [await write(occurred_at=same) for _ in range(3)]
    older = await write(occurred_at=at("2025-02-01T10:00:00Z"))
    newer = await write(occurred_at=at("2025-04-01T10:00:00Z"))
    listed = (await client.get(url("/events"), headers=site_admin.headers)).json()
    expected = [str(newer), *sorted((str(i) for i in ids), reverse=True), str(older)]
    assert [e["id"] for e in listed["data"]] == expected
    oldest_first = await client.get(url("/events?sort=occurred_at"), headers=site_admin.headers)
    assert [e["id"] for e in oldest_first.json()["data"]] == expected[::-1]


async def test_sort_by_operation_and_entity_type(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter
) -> None:
    await write("user.block", entity_type="user")
    await write("role.grant", entity_type="role")
    await write("user.approve", entity_type="user")
    await write("job.cancel", entity_type="job")

    async def order(sort: str, field: str) -> list[str]:
        response = await client.get(url(f"/events?sort={sort}"), headers=site_admin.headers)
        assert response.status_code == 200, response.text
        return [e[field] for e in response.json()["data"]]

    assert await order("operation", "operation") == [
        "job.cancel", "role.grant", "user.approve", "user.block",
    ]  # fmt: skip
    assert await order("-entity_type,operation", "operation") == [
        "user.approve", "user.block", "role.grant", "job.cancel",
    ]  # fmt: skip


async def test_pages_and_links(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter
) -> None:
    await write.bulk(
        {"occurred_at": at(f"2025-01-01T00:00:{s:02d}Z"), "action": "user.block"} for s in range(5)
    )
    first = (await client.get(url("/events?limit=2"), headers=site_admin.headers)).json()
    assert first["meta"] == {"count": 5, "page": 1, "limit": 2, "pages": 3}
    assert first["links"]["prev"] is None
    assert first["links"]["next"] == url("/events?limit=2&page=2")
    assert first["links"]["last"] == url("/events?limit=2&page=3")
    seen = [e["id"] for e in first["data"]]
    link = first["links"]["next"]
    while link:
        page = (await client.get(link, headers=site_admin.headers)).json()
        seen += [e["id"] for e in page["data"]]
        link = page["links"]["next"]
    assert len(seen) == len(set(seen)) == 5
    filtered = await client.get(
        url("/events?filter[operation]=user.block&limit=2&page=2"), headers=site_admin.headers
    )
    assert filtered.json()["links"]["next"] == url(
        "/events?filter%5Boperation%5D=user.block&limit=2&page=3"
    )


async def test_filters(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter
) -> None:
    other = Actor(id=uuid.uuid4(), email="someone@example.com")
    approve = await write("user.approve", occurred_at=at("2025-03-01T09:00:00Z"), entity_id="u-1")
    publish = await write(
        "node.publish",
        entity_type="node",
        bundle="apis",
        module="catalogue",
        actor=other,
        occurred_at=at("2025-03-02T09:00:00Z"),
    )
    revoke = await write(
        "subscription.revoke",
        entity_type="subscription",
        module="subscription",
        occurred_at=at("2025-03-03T09:00:00Z"),
    )

    async def ids(query: str) -> set[str]:
        response = await client.get(url(f"/events?{query}"), headers=site_admin.headers)
        assert response.status_code == 200, (query, response.text)
        return {e["id"] for e in response.json()["data"]}

    assert await ids("filter[operation]=node.publish") == {str(publish)}
    assert await ids("filter[entity_type]=subscription") == {str(revoke)}
    assert await ids("filter[entity_id]=u-1") == {str(approve)}
    assert await ids("filter[bundle]=apis") == {str(publish)}
    assert await ids("filter[module]=user") == {str(approve)}
    assert await ids(f"filter[actor]={other.id}") == {str(publish)}
    assert await ids("filter[actor]=ops@EXAMPLE.com") == {str(approve), str(revoke)}
    assert await ids("filter[actor]=nobody@example.com") == set()
    # from is inclusive, to exclusive; any offset, "Z", or a "+" that arrived as a space
    assert await ids("filter[from]=2025-03-02T09:00:00Z") == {str(publish), str(revoke)}
    assert await ids("filter[to]=2025-03-02T09:00:00Z") == {str(approve)}
    assert await ids("filter[from]=2025-03-02T10:00:00%2B01:00&filter[to]=2025-03-03T00:00Z") == {
        str(publish)
    }
    assert await ids("filter[from]=2025-03-02T10:00:00+01:00") == {str(publish), str(revoke)}
    assert await ids("filter[operation]=user.approve&filter[module]=catalogue") == set()
    # values longer than any stored one, or not ASCII, simply match nothing
    assert await ids(f"filter[entity_id]={'x' * 300}&filter[actor]={'é' * 300}") == set()
    assert await ids("filter[from]=0001-01-01T00:00:00Z&filter[to]=9999-12-31T00:00:00Z") == {
        str(approve),
        str(publish),
        str(revoke),
    }


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("filter[from]=yesterday", "filter[from]"),
        ("filter[from]=2025-03-01T00:00:00", "filter[from]"),  # no time zone
        ("filter[to]=2025-03-01", "filter[to]"),
        ("filter[from]=0001-01-01T00:00:00%2B01:00", "filter[from]"),
        ("filter[to]=9999-12-31T23:59:59-01:00", "filter[to]"),
        ("filter[from]=2025-03-02T00:00:00Z&filter[to]=2025-03-01T00:00:00Z", "filter[to]"),
        ("filter[colour]=red", "filter[colour]"),
        ("filter[surface]=management", "filter[surface]"),
        ("sort=summary", "sort"),
        ("sort=-", "sort"),
        ("page=0", "page"),
        ("page=x", "page"),
        ("limit=501", "limit"),
        ("size=10", "size"),
        ("filter[operation]=a&filter[operation]=b", "filter[operation]"),
        ("filter[operation]=a%00b", "filter[operation]"),
    ],
)
async def test_bad_queries_are_400_naming_the_parameter(
    client: httpx.AsyncClient, site_admin: SiteAccount, query: str, parameter: str
) -> None:
    response = await client.get(url(f"/events?{query}"), headers=site_admin.headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert parameter in [e["parameter"] for e in response.json()["errors"]]
