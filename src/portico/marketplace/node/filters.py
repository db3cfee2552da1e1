"""The list filter every node list shares: where the node comes from."""

from __future__ import annotations

import uuid

from portico.core.filter_values import FilterValues
from portico.marketplace.node.models import SourceType

SOURCE_VALUES = "custom, imported or a gateway connection's id"


def source(values: FilterValues) -> tuple[SourceType | None, uuid.UUID | None]:
    """``filter[source]``: ``custom``, ``imported``, or a gateway connection's id (the nodes
    imported from it: the connection implies the source type)."""
    raw = values.text("source")
    if raw is None:
        return None, None
    if raw in (SourceType.CUSTOM.value, SourceType.IMPORTED.value):
        return SourceType(raw), None
    try:
        return None, uuid.UUID(raw)
    except ValueError:
        values.refuse("source", SOURCE_VALUES)
        return None, None
