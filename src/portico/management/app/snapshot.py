"""The consumers an environment's gateways authenticate, as its snapshot carries them, with
the apps that own some of them (``deployment.snapshot`` builds snapshots with it). Here, in the
app package, because it reads both consumers and the apps above them.

A consumer of the organisation is valid in every environment, except one an app owns: that
one is valid only in its app's environment, and only while the app and its developer are
active (a revoked app, or an inactive developer, cuts access at once).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import utcnow
from portico.gateway.plugins.registry import PLUGINS
from portico.gateway.snapshot import RetiringCredential, SnapshotApp, SnapshotConsumer
from portico.management.app.repository import AppRepository
from portico.management.consumer.credentials import gateway_credential
from portico.management.consumer.models import Consumer
from portico.management.consumer.repository import ConsumerRepository
from portico.management.plugin.attachments import check_attachments


def _is_credential(name: str) -> bool:
    spec = PLUGINS.get(name)
    return spec is not None and spec.consumer is not None


def retiring_credentials(consumer: Consumer, now: datetime) -> list[RetiringCredential]:
    """The consumer's rotated-out credentials whose grace period has not ended."""
    out = []
    for entry in consumer.retiring or []:
        expires = datetime.fromisoformat(str(entry["expires_at"]))
        if expires > now:
            out.append(
                RetiringCredential(
                    plugin=entry["plugin"],
                    credential=gateway_credential(entry["plugin"], entry["credential"]),
                    expires_at=expires.timestamp(),
                )
            )
    return out


async def snapshot_consumers(
    session: AsyncSession, org_id: uuid.UUID, environment_id: uuid.UUID
) -> list[SnapshotConsumer]:
    """Ordered by username. Credentials in the form a gateway checks them (key hashes,
    password hashes, secrets still encrypted); the other plugins validated, defaults filled
    in and ordered as the runtime's check makes them, at the consumer scope."""
    apps = AppRepository(session)
    owned = await apps.all_app_consumer_ids(org_id)
    serving = {
        app.consumer_id: (app, developer)
        for app, developer in await apps.serving(org_id)
        if app.environment_id == environment_id
    }
    ranked = await apps.ranked_products(app.id for app, _ in serving.values())
    now = utcnow()
    out: list[SnapshotConsumer] = []
    for index, consumer in enumerate(await ConsumerRepository(session).all_in_org(org_id)):
        app_info: SnapshotApp | None = None
        if consumer.id in owned:
            if consumer.id not in serving:
                continue  # another environment's app, or access cut
            app, developer = serving[consumer.id]
            app_info = SnapshotApp(
                id=str(app.id),
                name=app.name,
                developer_id=str(developer.id),
                developer_email=developer.email,
                product_ids=ranked.get(app.id, []),
            )
        stored: dict[str, Any] = consumer.plugins or {}
        out.append(
            SnapshotConsumer(
                id=str(consumer.id),
                username=consumer.username,
                credentials={
                    name: gateway_credential(name, value)
                    for name, value in stored.items()
                    if _is_credential(name)
                },
                plugins=sorted(
                    check_attachments(
                        {n: v for n, v in stored.items() if not _is_credential(n)},
                        "consumer",
                        f"/consumers/{index}",
                    ),
                    key=lambda a: (a.order, a.name),
                ),
                retiring=retiring_credentials(consumer, now),
                app=app_info,
            )
        )
    return out
