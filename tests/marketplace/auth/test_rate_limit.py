"""Token endpoints are rate limited per client address: in the process, or shared in Redis."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from portico.core.account import User
from portico.core.audit import AuditEntry
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.ratelimit import Limit, LocalCounters, RateLimiter
from portico.marketplace.auth.ratelimit import client_key
from tests.conftest import TEST_PASSWORD
from tests.marketplace.auth.conftest import AppMaker, client_for, refresh, sign_in
from tests.marketplace.conftest import SiteFactory, url
from tests.support.redisserver import RedisServer


def assert_limited(response: httpx.Response, within: int = 300) -> int:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == "/problems/too-many-requests"
    retry_after = int(response.headers["retry-after"])
    assert 0 < retry_after <= within
    return retry_after


async def test_the_eleventh_attempt_is_429_until_the_window_frees(
    client: httpx.AsyncClient, site: SiteFactory, clock: Clock, app: object, issuance: None
) -> None:
    account = await site.account()
    assert (await sign_in(client, account.email)).status_code == 200  # successes count
    assert (await client.post(url("/auth/token"), json={})).status_code == 400  # so do these
    for _ in range(8):
        assert (await sign_in(client, account.email, "wrong password")).status_code == 401
    eleventh = await sign_in(client, account.email)  # even with the right password
    retry_after = assert_limited(eleventh)
    assert "at most 10 attempts per 5 minutes" in eleventh.json()["detail"]
    async with client_for(app, "192.0.2.44") as elsewhere:
        assert (await sign_in(elsewhere, account.email)).status_code == 200
    # refreshing has a budget of its own
    assert (await refresh(client, "not-a-token")).status_code == 401
    clock.advance(timedelta(seconds=retry_after - 30))
    assert_limited(await sign_in(client, account.email))
    clock.advance(timedelta(seconds=30))
    assert (await sign_in(client, account.email)).status_code == 200


async def test_refresh_has_its_own_limit(
    client: httpx.AsyncClient, clock: Clock, issuance: None
) -> None:
    for _ in range(30):
        assert (await refresh(client, "not-a-token")).status_code == 401
    assert_limited(await refresh(client, "not-a-token"))
    assert "at most 30 attempts" in (await refresh(client, "x")).json()["detail"]
    clock.advance(timedelta(minutes=5))
    assert (await refresh(client, "not-a-token")).status_code == 401


async def test_forwarded_for_is_believed_only_from_trusted_proxies(
    site: SiteFactory, make_app: AppMaker, issuance: None
) -> None:
    account = await site.account()
    app = make_app(trusted_proxies=["10.0.0.0/8"])
    async with client_for(app, "10.1.2.3") as proxy, client_for(app, "192.0.2.9") as direct:
        for _ in range(10):
            response = await sign_in(
                proxy, account.email, "nope", **{"X-Forwarded-For": "203.0.113.5"}
            )
            assert response.status_code == 401
        limited = await sign_in(proxy, account.email, **{"X-Forwarded-For": "203.0.113.5"})
        assert_limited(limited)
        # another client behind the same proxy has its own budget
        other = await sign_in(proxy, account.email, **{"X-Forwarded-For": "203.0.113.6"})
        assert other.status_code == 200
        # an untrusted peer cannot pick its address: it is counted as itself
        for _ in range(10):
            spoofed = await sign_in(
                direct, account.email, "nope", **{"X-Forwarded-For": f"198.51.100.{_}"}
            )
            assert spoofed.status_code == 401
        assert_limited(await sign_in(direct, account.email))


async def test_a_proxy_s_own_forwarded_for_line_is_the_one_believed(
    site: SiteFactory, make_app: AppMaker, database: Database, issuance: None
) -> None:
    """HAProxy's ``option forwardfor`` adds its own X-Forwarded-For line after the client's:
    the lines are one field (RFC 9110), walked right to left, so the client's line cannot
    choose its address, its budget or what the audit log records."""
    account = await site.account()
    app = make_app(trusted_proxies=["10.0.0.0/8"])
    async with client_for(app, "10.1.2.3") as proxy:
        for attempt in range(10):
            headers = [
                ("X-Forwarded-For", f"198.51.100.{attempt}"),  # the client's own line
                ("X-Forwarded-For", "203.0.113.5"),  # the proxy's
            ]
            response = await proxy.post(
                url("/auth/token"),
                json={"email": account.email, "password": "nope"},
                headers=headers,
            )
            assert response.status_code == 401, response.text
        limited = await proxy.post(
            url("/auth/token"),
            json={"email": account.email, "password": TEST_PASSWORD},
            headers=[("X-Forwarded-For", "198.51.100.99"), ("X-Forwarded-For", "203.0.113.5")],
        )
        assert_limited(limited)
        # another client of that proxy: its line is the last, and it signs in
        other = await proxy.post(
            url("/auth/token"),
            json={"email": account.email, "password": TEST_PASSWORD},
            headers=[("X-Forwarded-For", "192.0.2.1, 203.0.113.6")],
        )
        assert other.status_code == 200, other.text
    async with database.session() as session:
        [event] = await session.scalars(
            select(AuditEntry).where(AuditEntry.action == "auth.sign_in")
        )
    assert event.ip == "203.0.113.6"


async def test_registrations_are_limited_per_address(
    make_app: AppMaker, clock: Clock, database: Database
) -> None:
    """5 well-formed registrations per address in 10 minutes (each hashes a password);
    malformed ones cost nothing and do not count."""
    app = make_app()

    async def register(client: httpx.AsyncClient, n: int) -> httpx.Response:
        return await client.post(
            "/api/portal/v1/registrations",
            json={"email": f"r{n}@example.com", "password": "p" * 12, "display_name": "R"},
        )

    async with client_for(app) as client, client_for(app, "192.0.2.60") as elsewhere:
        for _ in range(3):
            malformed = await client.post("/api/portal/v1/registrations", json={})
            assert malformed.status_code == 400
        for n in range(5):
            assert (await register(client, n)).status_code == 202
        sixth = await register(client, 5)
        retry_after = assert_limited(sixth, within=600)
        assert "at most 5 attempts per 10 minutes" in sixth.json()["detail"]
        assert (await register(elsewhere, 6)).status_code == 202  # its own budget
        clock.advance(timedelta(seconds=retry_after))
        assert (await register(client, 7)).status_code == 202
    async with database.session() as session:
        emails = set(await session.scalars(select(User.email)))
    assert "r5@example.com" not in emails and {"r6@example.com", "r7@example.com"} <= emails


async def test_registrations_share_the_count_through_redis(
    make_app: AppMaker, redis_server: RedisServer
) -> None:
    first, second = make_app(redis_url=redis_server.url), make_app(redis_url=redis_server.url)
    async with client_for(first) as one, client_for(second) as two:
        for n in range(5):
            response = await (one if n % 2 else two).post(
                "/api/portal/v1/registrations",
                json={"email": f"s{n}@example.com", "password": "p" * 12, "display_name": "S"},
            )
            assert response.status_code == 202, response.text
        refused = await one.post(
            "/api/portal/v1/registrations",
            json={"email": "s5@example.com", "password": "p" * 12, "display_name": "S"},
        )
        assert_limited(refused, within=600)


def test_local_logs_slide_and_stay_bounded() -> None:
    clock = Clock()
    counters = LocalCounters(clock)
    limit = Limit("test", attempts=2, window=60)
    assert counters.hit(limit, "a").allowed
    clock.advance(timedelta(seconds=30))
    assert counters.hit(limit, "a").allowed
    refused = counters.hit(limit, "a")
    assert not refused.allowed and refused.retry_after == 30
    clock.advance(timedelta(seconds=30))  # the first hit left the window, the second has not
    assert counters.hit(limit, "a").allowed
    assert not counters.hit(limit, "a").allowed


def test_ipv6_clients_are_counted_per_64() -> None:
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::2")
    assert client_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:192.0.2.1") == client_key("192.0.2.1") == "192.0.2.1"
    assert client_key(None) == "unknown"


# ---------------------------------------------------------------------------- Redis


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


async def test_processes_sharing_redis_share_the_count(
    site: SiteFactory, make_app: AppMaker, clock: Clock, redis_server: RedisServer, issuance: None
) -> None:
    account = await site.account()
    first, second = make_app(redis_url=redis_server.url), make_app(redis_url=redis_server.url)
    async with client_for(first) as one, client_for(second) as two:
        for attempt in range(10):
            client = one if attempt % 2 else two
            assert (await sign_in(client, account.email, "nope")).status_code == 401
        assert_limited(await sign_in(one, account.email))
        assert_limited(await sign_in(two, account.email))
        async with client_for(second, "192.0.2.50") as elsewhere:
            assert (await sign_in(elsewhere, account.email)).status_code == 200
        clock.advance(timedelta(minutes=5))  # the window follows the application's clock
        assert (await sign_in(two, account.email)).status_code == 200


async def test_a_failing_redis_falls_back_to_local_counting(
    site: SiteFactory,
    make_app: AppMaker,
    redis_server: RedisServer,
    issuance: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    account = await site.account()
    url_of_stopped = redis_server.url
    redis_server.stop()
    caplog.set_level(logging.INFO, logger="portico.ratelimit")
    async with client_for(make_app(redis_url=url_of_stopped)) as client:
        assert (await sign_in(client, account.email)).status_code == 200
        for _ in range(9):
            assert (await sign_in(client, account.email, "nope")).status_code == 401
        assert_limited(await sign_in(client, account.email))
    warnings = [r for r in caplog.records if r.name == "portico.ratelimit"]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert "counting in this process" in warnings[0].getMessage()


async def test_a_url_that_is_not_redis_means_local_counting(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limiter = RateLimiter(Clock(), redis_url="http://user:hunter2@cache.internal:6379")
    assert limiter.redis is None
    assert (await limiter.hit(Limit("test", attempts=1, window=60), "a")).allowed
    assert "counting in this process" in caplog.text
    assert "hunter2" not in caplog.text
