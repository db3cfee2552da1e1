"""The feature registry: synced from the installed modules (added, marked removed, restored,
state kept), read one by one and as a list, and audited."""

from __future__ import annotations

import httpx
from sqlalchemy import select

from portico.core.audit import AuditEntry
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.settings import Settings
from portico.marketplace.modules import MODULES
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.features.conftest import installed, sync

EVERY = sorted(m.name for m in MODULES)
#: the modules outside the small installations below, in the modules' order
SMALL = ("admin_api", "user", "features")
REST = [m.name for m in MODULES if m.name not in SMALL]
#: what an installation of "features" and "audit" (and the core) lacks
LACKING = sorted(set(EVERY) - {"admin_api", "audit", "features"})


async def keys(client: httpx.AsyncClient, who: SiteAccount, query: str = "") -> list[str]:
    response = await client.get(url("/features" + query), headers=who.headers)
    assert response.status_code == 200, response.text
    return [f["key"] for f in response.json()["data"]]


async def test_sync_adds_new_modules_marks_removed_ones_and_restores_them(
    settings: Settings, database: Database, clock: Clock, manager: SiteAccount
) -> None:
    async with installed(["user", "features"], settings, database, clock) as small:
        assert await keys(small, manager) == []  # nothing registered before a sync
        first = await sync(small, manager)
        assert first["added"] == ["admin_api", "user", "features"]
        assert first["removed"] == first["restored"] == []
        assert await keys(small, manager) == ["admin_api", "features", "user"]
        switched = await small.patch(
            url("/features/user"), json={"enabled": False}, headers=manager.headers
        )
        assert switched.status_code == 200, switched.text

    async with installed(None, settings, database, clock) as full:
        report = await sync(full, manager)
        assert report["added"] == REST
        assert report["removed"] == report["restored"] == []
        assert [f["key"] for f in report["features"]] == EVERY
        assert await keys(full, manager) == EVERY
        again = await sync(full, manager)  # idempotent
        assert again["added"] == again["removed"] == again["restored"] == []

    async with installed(["features", "audit"], settings, database, clock) as fewer:
        report = await sync(fewer, manager)
        assert report["added"] == report["restored"] == []
        assert sorted(report["removed"]) == LACKING
        gone = await fewer.get(url("/features/user"), headers=manager.headers)
        assert gone.status_code == 200
        user = gone.json()["data"]
        assert user["installed"] is False
        assert user["removed_at"] is not None
        assert user["enabled"] is False  # its state is kept for its return
        assert await keys(fewer, manager, "?filter[installed]=false") == LACKING
        assert await keys(fewer, manager, "?filter[installed]=true") == [
            "admin_api",
            "audit",
            "features",
        ]

    async with installed(None, settings, database, clock) as full:
        report = await sync(full, manager)
        assert sorted(report["restored"]) == LACKING
        back = (await full.get(url("/features/user"), headers=manager.headers)).json()["data"]
        assert back["installed"] is True
        assert back["removed_at"] is None
        assert back["enabled"] is False
        # and the kept state is in force: the user module's endpoints are still off
        users = await full.get(url("/users"), headers=manager.headers)
        assert users.status_code == 403
        assert users.json()["type"] == "/problems/feature-disabled"

    async with database.session() as session:
        actions = [
            (e.action, e.entity_id)
            for e in await session.scalars(
                select(AuditEntry).where(AuditEntry.entity_type == "feature")
            )
        ]
    assert ("feature.add", "audit") in actions
    assert ("feature.remove", "user") in actions
    assert ("feature.restore", "user") in actions
    assert ("feature.update", "user") in actions
    assert len([a for a in actions if a[0] == "feature.add"]) == len(MODULES)


async def test_one_feature_and_the_list_show_state_settings_and_their_schema(
    admin_api: httpx.AsyncClient, manager: SiteAccount, synced: None
) -> None:
    one = await admin_api.get(url("/features/content"), headers=manager.headers)
    assert one.status_code == 200, one.text
    content = one.json()["data"]
    assert content["key"] == "content"
    assert content["label"] == "Catalogue and content"
    assert content["enabled"] is True
    assert content["config"] == {}
    assert content["installed"] is True
    assert content["switchable"] is True
    assert content["always_on"] is None
    assert set(content["settings_schema"]["properties"]) == {"disabled_notice"}

    core = (await admin_api.get(url("/features/admin_api"), headers=manager.headers)).json()
    assert core["data"]["switchable"] is False
    assert "sign-in" in core["data"]["always_on"]
    assert core["data"]["settings_schema"] is None

    listed = await admin_api.get(url("/features?limit=2&sort=-key"), headers=manager.headers)
    assert listed.status_code == 200
    body = listed.json()
    assert [f["key"] for f in body["data"]] == sorted(EVERY, reverse=True)[:2]
    pages = -(-len(MODULES) // 2)
    assert body["meta"] == {"count": len(MODULES), "page": 1, "limit": 2, "pages": pages}
    assert body["links"]["next"] is not None


async def test_list_filters_on_the_platform_state(
    admin_api: httpx.AsyncClient, manager: SiteAccount, synced: None
) -> None:
    await admin_api.patch(url("/features/audit"), json={"enabled": False}, headers=manager.headers)
    assert await keys(admin_api, manager, "?filter[enabled]=false") == ["audit"]
    assert "audit" not in await keys(admin_api, manager, "?filter[enabled]=true")
