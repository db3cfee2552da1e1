"""The connectors the marketplace knows, by id (the ``{source}`` of the admin API)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from portico.marketplace.connectors.base import Connector
from portico.marketplace.connectors.openapi import CONNECTOR as OPENAPI
from portico.marketplace.connectors.portico import CONNECTOR as PORTICO

#: in the order the admin UI offers them
CONNECTORS: Mapping[str, Connector] = MappingProxyType(
    {connector.id: connector for connector in (PORTICO, OPENAPI)}
)


def find(source: str) -> Connector | None:
    return CONNECTORS.get(source)
