"""What the product domain needs from the packages above it (see ``core/ports.py``).

Apps subscribe to products, and apps sit above products: a product's subscriptions are
counted, located and removed through these ports, provided by
``portico.management.app.repository``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.ports import Port

#: how many apps subscribe to the product
subscriber_count: Port[[AsyncSession, uuid.UUID], Awaitable[int]] = Port(
    "the subscriber count of a product (portico.management.app.repository)"
)
#: the environments of the apps that subscribe to the product
subscriber_environment_ids: Port[[AsyncSession, uuid.UUID], Awaitable[set[uuid.UUID]]] = Port(
    "the environments of a product's subscribers (portico.management.app.repository)"
)
#: remove every subscription to the product
remove_subscriptions: Port[[AsyncSession, uuid.UUID], Awaitable[None]] = Port(
    "the removal of a product's subscriptions (portico.management.app.repository)"
)
