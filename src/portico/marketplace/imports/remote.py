"""A connection's remote side as imports use it: its connector with the stored configuration
(secrets opened), every failure turned into an answer that names the connection, and the
connection's status kept up to date.

A read that fails as a whole (the inventory, the API or product asked for) marks the
connection ``failing`` and is a 502 (:class:`RemoteFailed`); the next one that succeeds marks
it ``connected`` again. Each mark is a short transaction of its own, written while the
caller holds none (it waited on the remote side outside any), so that it stays when the
request fails. One API of many that cannot be read is that API's failure, not the
connection's: the bulk imports report it and leave the status alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.sealing import SecretBox
from portico.marketplace.connection.models import ConnectionStatus, GatewayConnection
from portico.marketplace.connectors.base import (
    Connector,
    ConnectorError,
    Outbound,
    RemoteApi,
    RemoteApiDetail,
    RemoteNotFound,
    RemoteProduct,
)
from portico.marketplace.connectors.registry import CONNECTORS
from portico.marketplace.imports.problems import (
    RemoteApiNotFound,
    RemoteFailed,
    SourceWithoutProducts,
)
from portico.marketplace.imports.repository import ImportRepository

#: remote APIs fetched at once by the bulk imports (each a few requests). Enough to hide the
#: round trips; more only queues on the remote side: measured against a management service
#: on SQLite (bench/bench_import.py), 1,000 APIs took 40-42 s at 1, 2 or 4 and 55-58 s at 8
FETCH_CONCURRENCY = 4
#: one API read among many: the API, or why it could not be read
Fetched = RemoteApiDetail | RemoteApiNotFound | RemoteFailed


@dataclass
class Remote:
    connection_id: uuid.UUID
    name: str
    source: str
    #: the status the connection had when read: a mark is written only when it changes
    status: ConnectionStatus
    connector: Connector
    config: Mapping[str, Any]
    outbound: Outbound
    database: Database
    clock: Clock

    @classmethod
    def of(
        cls,
        connection: GatewayConnection,
        *,
        box: SecretBox,
        outbound: Outbound,
        database: Database,
        clock: Clock,
    ) -> Remote:
        label = f"gateway connection '{connection.name}' ({connection.id})"
        connector = CONNECTORS.get(connection.source)
        if connector is None:
            raise RemoteFailed(f"{label}: its source type '{connection.source}' is not known")
        try:
            secrets = _open(box, connection.sealed_secrets)
        except ValueError:
            raise RemoteFailed(
                f"{label}: its stored credentials cannot be decrypted with the server's keys; "
                "replace the connection (PUT) with its full credentials"
            ) from None
        return cls(
            connection_id=connection.id,
            name=connection.name,
            source=connection.source,
            status=connection.status,
            connector=connector,
            config={**connection.config, **secrets},
            outbound=outbound,
            database=database,
            clock=clock,
        )

    @property
    def label(self) -> str:
        return f"gateway connection '{self.name}' ({self.connection_id})"

    def reading(self, outbound: Outbound) -> Remote:
        """The same remote side read through ``outbound`` (a shared client)."""
        return dataclasses.replace(self, outbound=outbound)

    def require_products(self) -> None:
        if not self.connector.capabilities.get("products"):
            raise SourceWithoutProducts(
                f"{self.label} is of source type '{self.source}' ({self.connector.label}), "
                "which has no products"
            )

    async def list_apis(self) -> list[RemoteApi]:
        try:
            apis = await self.connector.list_apis(self.config, self.outbound)
        except ConnectorError as failed:
            raise await self._failing(failed) from None
        await self._connected()
        return apis

    async def list_products(self) -> list[RemoteProduct]:
        self.require_products()
        try:
            products = await self.connector.list_products(self.config, self.outbound)
        except ConnectorError as failed:
            raise await self._failing(failed) from None
        await self._connected()
        return products

    async def fetch_api(self, api_id: str, *, listed: RemoteApi | None = None) -> RemoteApiDetail:
        """One API asked for by itself: its failure is the connection's."""
        try:
            detail = await self.connector.fetch_api(
                self.config, self.outbound, api_id, listed=listed
            )
        except RemoteNotFound:
            raise self.no_api(api_id) from None
        except ConnectorError as failed:
            raise await self._failing(failed) from None
        await self._connected()
        return detail

    async def fetch_many(self, apis: Sequence[RemoteApi]) -> list[Fetched]:
        """Each API (as ``list_apis`` gave it) with its document, a few at once, in order;
        an API that cannot be read is its own failure (the connection's status is left
        alone)."""
        limit = asyncio.Semaphore(FETCH_CONCURRENCY)

        async def one(api: RemoteApi) -> Fetched:
            if api.problem is not None:
                return RemoteFailed(f"{self.label}: API {api.api_id!r}: {api.problem}")
            async with limit:
                try:
                    return await self.connector.fetch_api(
                        self.config, self.outbound, api.api_id, listed=api
                    )
                except RemoteNotFound:
                    return self.no_api(api.api_id)
                except ConnectorError as failed:
                    return RemoteFailed(f"{self.label}: API {api.api_id!r}: {failed.message}")

        return list(await asyncio.gather(*(one(api) for api in apis)))

    def no_api(self, api_id: str) -> RemoteApiNotFound:
        return RemoteApiNotFound(f"{self.label} exposes no API with api_id '{api_id}'")

    async def _failing(self, failed: ConnectorError) -> RemoteFailed:
        await self._mark(ConnectionStatus.FAILING)
        return RemoteFailed(f"{self.label} failed: {failed.message}")

    async def _connected(self) -> None:
        await self._mark(ConnectionStatus.CONNECTED)

    async def _mark(self, status: ConnectionStatus) -> None:
        if status is self.status:
            return
        async with self.database.session() as session, session.begin():
            await ImportRepository(session).set_connection_status(
                self.connection_id, status, self.clock.now()
            )
        self.status = status  # marked once per change, not per call


def _open(box: SecretBox, sealed: str) -> dict[str, Any]:
    """The secret fields; ``ValueError`` when the server's keys no longer open them."""
    if not sealed:
        return {}
    opened = json.loads(box.decrypt(sealed))
    if not isinstance(opened, dict):
        raise ValueError("sealed secrets are not an object")
    return opened
