"""``portico bootstrap`` reconciles the registry with the installed modules at every run, so
a fresh installation lists its features without anyone syncing."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from portico.bootstrap import bootstrap
from portico.core.audit import Actor, AuditEntry
from portico.core.clock import utcnow
from portico.core.db.engine import Database
from portico.core.settings import Settings
from portico.marketplace.feature import service as feature_service
from portico.marketplace.feature.models import Feature
from portico.marketplace.modules import MODULES, installed


async def test_bootstrap_registers_the_installed_modules_features(
    settings: Settings, database: Database
) -> None:
    await bootstrap(settings.model_copy(update={"marketplace_modules": ["audit"]}), database)
    async with database.session() as session:
        assert sorted(f.key for f in await session.scalars(select(Feature))) == [
            "admin_api",
            "audit",
        ]

    await bootstrap(settings, database)  # every module installed now
    await bootstrap(settings, database)  # and again: nothing more to do
    async with database.session() as session:
        features = list(await session.scalars(select(Feature)))
        added = list(
            await session.scalars(select(AuditEntry).where(AuditEntry.action == "feature.add"))
        )
    assert sorted(f.key for f in features) == sorted(m.name for m in MODULES)
    assert all(f.enabled and f.removed_at is None for f in features)
    assert len(added) == len(MODULES)
    assert {(e.actor_id, e.actor_kind) for e in added} == {(None, "bootstrap")}


async def test_syncs_at_once_register_each_feature_once(
    settings: Settings, database: Database
) -> None:
    # several processes starting together each sync the registry: the ones that lose the
    # race for a key take the winner's row instead of failing their start
    modules = installed(None)

    async def one_sync() -> None:
        async with database.session() as session, session.begin():
            await feature_service.sync(
                session=session,
                actor=Actor(id=None, email=None, kind="bootstrap"),
                modules=modules,
                now=utcnow(),
            )

    await asyncio.gather(*(one_sync() for _ in range(4)))
    async with database.session() as session:
        keys = [f.key for f in await session.scalars(select(Feature))]
    assert sorted(keys) == sorted(m.name for m in MODULES)
