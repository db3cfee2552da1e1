"""Path ids of the portal API: anything that is not a UUID names nothing (404, never a 500
and never a 400: a client learns no more from a malformed id than from an unknown one)."""

from __future__ import annotations

import uuid

from portico.core.errors import NotFound


def path_id(raw: str, not_found: type[NotFound]) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise not_found() from None
