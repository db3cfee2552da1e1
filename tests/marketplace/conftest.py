"""Fixtures of the marketplace admin API: accounts with site roles and real ID tokens."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import httpx
import pytest
from starlette.routing import Mount

from portico.core.account import AccountStatus, User
from portico.core.db.engine import Database
from portico.marketplace.app import PREFIX
from portico.marketplace.user.models import SiteRoleAssignment
from tests.conftest import password_hash


def marketplace_app(app):  # type: ignore[no-untyped-def]
    """The admin API application mounted inside the control-plane app."""
    for route in app.routes:
        if isinstance(route, Mount) and route.path == PREFIX:
            return route.app
    raise AssertionError("the marketplace admin API is not mounted")


@dataclass
class SiteAccount:
    id: uuid.UUID
    email: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


class SiteFactory:
    def __init__(self, database: Database, app) -> None:  # type: ignore[no-untyped-def]
        self.database = database
        self.admin_api = marketplace_app(app)

    async def account(
        self,
        *roles: str,
        email: str | None = None,
        status: AccountStatus = AccountStatus.ACTIVE,
        platform_admin: bool = False,
    ) -> SiteAccount:
        email = email or f"site-{uuid.uuid4().hex[:10]}@example.com"
        async with self.database.session() as session, session.begin():
            user = User(
                id=uuid.uuid4(),
                email=email,
                display_name=email.split("@")[0],
                password_hash=password_hash(),
                status=status,
                is_platform_admin=platform_admin,
            )
            session.add(user)
            await session.flush()
            for role in roles:
                session.add(SiteRoleAssignment(user_id=user.id, role=role))
            issued = await self.admin_api.state.id_tokens.issue(
                session, user_id=user.id, email=email
            )
        return SiteAccount(user.id, email, issued.token)


@pytest.fixture
def site(database: Database, app) -> SiteFactory:  # type: ignore[no-untyped-def]
    return SiteFactory(database, app)


@pytest.fixture
async def site_admin(site: SiteFactory) -> SiteAccount:
    """The bootstrap administrator: every permission of every installed module."""
    return await site.account(platform_admin=True, email="root@portal.example.com")


@pytest.fixture
def admin_api(client: httpx.AsyncClient) -> httpx.AsyncClient:
    """The test client, for paths relative to /api/admin/v1."""
    return client


def url(path: str) -> str:
    return PREFIX + path
