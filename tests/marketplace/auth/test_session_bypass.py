"""The default-off session bypass: listed users call with their portal session cookie, and
each use is audited."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from sqlalchemy import select
from starlette.requests import Request

from portico.core.account import AccountStatus, User
from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.core.settings import Settings
from portico.marketplace.auth.bypass import COOKIE, same_site
from tests.marketplace.auth.conftest import AppMaker, client_for
from tests.marketplace.conftest import SiteAccount, SiteFactory, url

LISTED = "Portal.Admin@example.com"


def session_cookie(app: Any, account: SiteAccount) -> dict[str, str]:
    """The portal session: a management access token, as the portal holds it."""
    return {COOKIE: app.state.access_tokens.issue(str(account.id)).token}


async def bypass_events(database: Database) -> list[AuditEntry]:
    async with database.session() as session:
        statement = select(AuditEntry).where(AuditEntry.action == "auth.session_bypass")
        return list(await session.scalars(statement))


async def test_listed_users_may_call_with_their_session_and_each_use_is_audited(
    site: SiteFactory, make_app: AppMaker, database: Database
) -> None:
    app = make_app(admin_api_session_bypass_users=["portal.admin@EXAMPLE.com"])
    admin = await site.account(platform_admin=True, email=LISTED.lower())
    async with client_for(app) as client:
        client.cookies.update(session_cookie(app, admin))
        response = await client.get(url("/openapi.json"))
        assert response.status_code == 200, response.text
        # a query parameter the route does not read: refused, and the use still recorded
        refused = await client.get(url("/openapi.json"), params={"secret": "q"})
        assert refused.status_code == 400, refused.text
    events = await bypass_events(database)
    assert len(events) == 2
    event = events[0]
    assert (event.actor_id, event.actor_email) == (admin.id, admin.email)
    assert (event.surface, event.module, event.entity_type) == ("marketplace", "admin_api", "user")
    assert event.entity_id == str(admin.id) and event.ip == "127.0.0.1"
    assert event.request_id
    assert event.summary.startswith("GET /api/admin/v1/openapi.json")
    assert all("secret" not in e.summary for e in events)  # never the query string


async def test_every_use_is_recorded_whatever_the_outcome(
    site: SiteFactory, make_app: AppMaker, database: Database
) -> None:
    """The event is committed on its own: a failing request rolls its own transaction back,
    and the use it made of the session must stay in the log."""
    app = make_app(admin_api_session_bypass_users=[LISTED])
    admin = await site.account(platform_admin=True, email=LISTED.lower())
    active = await site.account()
    async with client_for(app) as client:
        client.cookies.update(session_cookie(app, admin))
        outcomes = {
            404: await client.get(url(f"/users/{uuid.uuid4()}")),
            409: await client.post(url(f"/users/{active.id}/approve")),  # not pending
            400: await client.post(url(f"/users/{active.id}/block"), json={"reason": 7}),
        }
        assert {status: r.status_code for status, r in outcomes.items()} == {
            404: 404,
            409: 409,
            400: 400,
        }
    events = await bypass_events(database)
    assert sorted(e.summary.split(" with ")[0] for e in events) == sorted(
        [
            "GET /api/admin/v1/users/" + str(outcomes[404].request.url).rsplit("/", 1)[1],
            f"POST /api/admin/v1/users/{active.id}/approve",
            f"POST /api/admin/v1/users/{active.id}/block",
        ]
    )
    requests = {r.headers["x-request-id"] for r in outcomes.values()}
    assert {e.request_id for e in events} == requests
    assert {(e.actor_id, e.ip, e.entity_id) for e in events} == {
        (admin.id, "127.0.0.1", str(admin.id))
    }
    # the failed requests kept nothing else
    async with database.session() as session:
        user = await session.get(User, active.id)
        assert user is not None and user.status is AccountStatus.ACTIVE


async def test_the_bypass_is_off_by_default(
    client: httpx.AsyncClient, app: Any, site: SiteFactory, database: Database
) -> None:
    admin = await site.account(platform_admin=True, email=LISTED.lower())
    client.cookies.update(session_cookie(app, admin))
    response = await client.get(url("/openapi.json"))
    assert response.status_code == 401
    assert response.json()["detail"] == "authentication required"
    assert await bypass_events(database) == []


async def test_only_listed_active_users_and_only_without_a_header(
    site: SiteFactory, make_app: AppMaker, database: Database
) -> None:
    app = make_app(admin_api_session_bypass_users=[LISTED])
    listed = await site.account(platform_admin=True, email=LISTED.lower())
    unlisted = await site.account(platform_admin=True)
    async with client_for(app) as client:
        client.cookies.update(session_cookie(app, unlisted))
        refused = await client.get(url("/openapi.json"))
        assert refused.status_code == 401
        assert "session not accepted" in refused.json()["detail"]

        client.cookies.update({COOKIE: "not-a-token"})
        assert (await client.get(url("/openapi.json"))).status_code == 401

        client.cookies.update(session_cookie(app, listed))
        # an Authorization header always wins, even a bad one
        bad_header = await client.get(url("/openapi.json"), headers={"Authorization": "Bearer x"})
        assert bad_header.status_code == 401
        # an ID token of an admin API token is not a portal session either
        client.cookies.update({COOKIE: listed.token})
        assert (await client.get(url("/openapi.json"))).status_code == 401

        client.cookies.update(session_cookie(app, listed))
        async with database.session() as session, session.begin():
            user = await session.get(User, listed.id)
            assert user is not None
            user.status = AccountStatus.BLOCKED
        assert (await client.get(url("/openapi.json"))).status_code == 401
    assert await bypass_events(database) == []


async def test_a_listed_user_without_the_baseline_is_still_403(
    site: SiteFactory, make_app: AppMaker
) -> None:
    app = make_app(admin_api_session_bypass_users=[LISTED])
    plain = await site.account(email=LISTED.lower())
    async with client_for(app) as client:
        client.cookies.update(session_cookie(app, plain))
        denied = await client.get(url("/openapi.json"))
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'access marketplace admin api'"


def _request(method: str, headers: dict[str, str]) -> Request:
    scope = {
        "type": "http",
        "method": method,
        "scheme": "https",
        "server": ("portal.example.com", 443),
        "path": "/api/admin/v1/users/x/block",
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    return Request(scope)


def test_state_changing_calls_must_come_from_the_portal(settings: Settings) -> None:
    public = settings.model_copy(update={"public_url": "https://admin.example.com"})
    host = {"Host": "portal.example.com"}
    assert same_site(_request("GET", {**host, "Sec-Fetch-Site": "cross-site"}), settings)
    assert same_site(_request("POST", host), settings)  # no Origin: not a browser's cross-site
    assert same_site(_request("POST", {**host, "Origin": "https://portal.example.com"}), settings)
    assert same_site(_request("DELETE", {**host, "Origin": "https://admin.example.com"}), public)
    assert not same_site(_request("POST", {**host, "Origin": "https://evil.example"}), settings)
    assert not same_site(_request("POST", {**host, "Sec-Fetch-Site": "cross-site"}), settings)
