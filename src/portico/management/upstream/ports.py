"""What the upstream domain needs from the packages above it (see ``core/ports.py``).

Whether an upstream is in use, and by what, is known where revisions bind upstreams and are
deployed (``portico.management.revision.repository``), above the upstream.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.ports import Port

#: "<API> revision <n>" for every deployed revision whose routes target the upstream (by API
#: name, then revision number)
deployed_users: Port[[AsyncSession, uuid.UUID], Awaitable[list[str]]] = Port(
    "the deployed revisions using an upstream (portico.management.revision.repository)"
)
