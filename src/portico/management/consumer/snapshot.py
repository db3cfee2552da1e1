"""The org's consumers as every environment snapshot carries them.

Kept apart from the service: ``deployment.snapshot`` imports this module to build snapshots,
and the service imports ``deployment.snapshot`` to publish them.
"""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from portico.gateway.plugins.registry import PLUGINS
from portico.gateway.snapshot import SnapshotConsumer
from portico.management.consumer.credentials import gateway_credential
from portico.management.consumer.repository import ConsumerRepository
from portico.management.deployment.compiler import check_attachments


def _is_credential(name: str) -> bool:
    spec = PLUGINS.get(name)
    return spec is not None and spec.consumer is not None


async def snapshot_consumers(session: AsyncSession, org_id: uuid.UUID) -> list[SnapshotConsumer]:
    """Ordered by username. Credentials in the form a gateway checks them (key hashes,
    password hashes, secrets still encrypted); the other plugins validated, defaults filled
    in and ordered as the runtime's check makes them, at the consumer scope."""
    out: list[SnapshotConsumer] = []
    for index, consumer in enumerate(await ConsumerRepository(session).all_in_org(org_id)):
        stored = consumer.plugins or {}
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
            )
        )
    return out
