"""What the consumer domain needs from the packages above it (see ``core/ports.py``).

An app owns a consumer, and apps sit above consumers: whether a consumer is an app's (then it
changes only through its app) is asked through this port, provided by
``portico.management.app.repository``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable
from typing import NamedTuple

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.ports import Port


class OwningApp(NamedTuple):
    id: uuid.UUID
    name: str


#: the app that owns the consumer, if any
owning_app: Port[[AsyncSession, uuid.UUID], Awaitable[OwningApp | None]] = Port(
    "the app owning a consumer (portico.management.app.repository)"
)
