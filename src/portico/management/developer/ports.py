"""What the developer domain needs from the packages above it (see ``core/ports.py``).

A developer owns apps, and apps sit above developers (an app refers to its developer, its
consumer and its products): how many apps a developer has, where they are, and deleting
them with a developer are asked through these ports, provided by
``portico.management.app.repository``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Iterable
from typing import NamedTuple

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.ports import Port


class OwnedApp(NamedTuple):
    """An app of a developer, as its deletion is audited."""

    id: uuid.UUID
    name: str
    environment_id: uuid.UUID
    developer_id: uuid.UUID


#: developer id → how many apps they own (0 for none), for each of the ids
app_counts: Port[[AsyncSession, Iterable[uuid.UUID]], Awaitable[dict[uuid.UUID, int]]] = Port(
    "the app counts of developers (portico.management.app.repository)"
)
#: the environments the developer's apps are in
app_environment_ids: Port[[AsyncSession, uuid.UUID], Awaitable[set[uuid.UUID]]] = Port(
    "the environments of a developer's apps (portico.management.app.repository)"
)
#: delete the developer's apps, their subscriptions and the consumers they own; what they were
delete_apps: Port[[AsyncSession, uuid.UUID], Awaitable[list[OwnedApp]]] = Port(
    "the deletion of a developer's apps (portico.management.app.repository)"
)
