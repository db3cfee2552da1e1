"""What the API domain needs from the packages above it (see ``core/ports.py``).

An API's read shape carries its revision count and, per environment, the revision live
there. Revisions sit above APIs (a revision belongs to an API and imports it), so the API
domain asks through these ports, provided by ``portico.management.revision.repository``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Iterable
from datetime import datetime
from typing import NamedTuple

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.ports import Port


class DeploymentRow(NamedTuple):
    """Where one revision of an API is live."""

    environment_id: uuid.UUID
    environment_name: str
    revision_id: uuid.UUID
    revision_number: int
    deployed_at: datetime


#: API id → how many revisions it has (0 for none), for each of the ids
revision_counts: Port[[AsyncSession, Iterable[uuid.UUID]], Awaitable[dict[uuid.UUID, int]]] = Port(
    "the revision counts of APIs (portico.management.revision.repository)"
)
#: API id → where it is live, ordered by environment name, for each of the ids
deployments: Port[
    [AsyncSession, Iterable[uuid.UUID]], Awaitable[dict[uuid.UUID, list[DeploymentRow]]]
] = Port("the deployments of APIs (portico.management.revision.repository)")
