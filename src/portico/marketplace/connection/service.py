"""Gateway connections: saved only once their connector's check passed, secrets sealed.

A check calls a remote side (seconds, at worst the connector's timeout); the request's
transaction, which has only read by then, is ended before it (``end_reads``) so that SQLite's
write lock is not held across the wait. The writes come after, in a new transaction.
Secrets are never logged, never audited, never returned: the read schema omits them.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.session import end_reads
from portico.core.errors import BadRequest, Conflict, NotFound, ValidationFailed
from portico.core.filter_values import FilterValues
from portico.core.pagination import ListQuery, Page
from portico.core.sealing import SecretBox, secret_box
from portico.marketplace.access import SiteCaller
from portico.marketplace.connection.models import ConnectionStatus, GatewayConnection
from portico.marketplace.connection.repository import (
    ConnectionFilters,
    GatewayConnectionRepository,
)
from portico.marketplace.connection.schemas import (
    CheckResult,
    ConnectionCheck,
    GatewayConnectionRead,
    GatewayConnectionWrite,
)
from portico.marketplace.connectors.base import (
    MAX_TEXT,
    MAX_URLS,
    URL_PATTERN,
    Connector,
    ConnectorError,
    Outbound,
)
from portico.marketplace.connectors.registry import CONNECTORS

MODULE = "gateway_sync"
_URL = re.compile(URL_PATTERN)


#: connection secrets are sealed under keys of their own (HKDF info), not the consumers'
SEALING_PURPOSE = b"portico gateway connection secrets v1"


def secrets_box(server_keys: Sequence[str]) -> SecretBox:
    """The box that seals and opens connection secrets under the server's keys."""
    return secret_box(tuple(server_keys), SEALING_PURPOSE)


class ConnectionNotFound(NotFound):
    default_detail = "gateway connection not found"


class ConnectionNameTaken(Conflict):
    default_detail = "a gateway connection already has this name"


class ConnectionCheckFailed(BadRequest):
    kind = "connection-check-failed"
    title = "Connection Check Failed"
    default_detail = "The connector could not reach the remote side with this configuration."
    description = (
        "Before a gateway connection is saved (created or replaced), its connector calls the "
        "remote side with the configuration given; that call failed. `detail` says why in "
        "the connector's words (unreachable, an address the SSRF guard refuses, credentials "
        "refused, not the expected kind of service) and `errors` points at the field of "
        "`config` at fault. Nothing was saved: correct the configuration and send it again."
    )


async def list_(*, session: AsyncSession, query: ListQuery) -> Page[GatewayConnection]:
    repository = GatewayConnectionRepository(session)
    return await repository.page(repository.matching(_filters(query.filters)), query)


async def get(*, session: AsyncSession, connection_id: uuid.UUID) -> GatewayConnection:
    connection = await GatewayConnectionRepository(session).get(connection_id)
    if connection is None:
        raise ConnectionNotFound()
    return connection


async def test(*, data: ConnectionCheck, outbound: Outbound, now: datetime) -> CheckResult:
    """Run the connector's check on a configuration, saving nothing. A refused body is a 400;
    a check that fails is an answer (``ok: false``), not an error."""
    connector = _connector(data.source)
    config = validate_config(connector, data.config)
    return await _check(connector, config, outbound, now)


async def test_stored(
    *,
    session: AsyncSession,
    connection_id: uuid.UUID,
    outbound: Outbound,
    box: SecretBox,
    now: datetime,
) -> CheckResult:
    """Run the check of a saved connection with its stored credentials; persists nothing."""
    connection = await get(session=session, connection_id=connection_id)
    connector = _connector(connection.source)
    try:
        config = {**connection.config, **_open(box, connection.sealed_secrets)}
    except ValueError:
        return CheckResult(
            ok=False,
            detail="the stored credentials cannot be decrypted with the server's keys; "
            "replace the connection (PUT) with its full credentials",
            field=None,
            checked_at=now,
        )
    await end_reads(session)
    return await _check(connector, config, outbound, now)


async def create(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    data: GatewayConnectionWrite,
    outbound: Outbound,
    box: SecretBox,
    now: datetime,
) -> GatewayConnection:
    connector = _connector(data.source)
    config = validate_config(connector, data.config)
    repository = GatewayConnectionRepository(session)
    await _refuse_taken(repository, data.name)
    await end_reads(session)
    await _check_or_refuse(connector, config, outbound)
    await _refuse_taken(repository, data.name)  # a connection may have taken it meanwhile
    public, secret = _split(connector, config)
    connection = GatewayConnection(
        id=uuid.uuid4(),
        name=data.name,
        source=connector.id,
        config=public,
        sealed_secrets=_seal(box, secret),
        status=ConnectionStatus.CONNECTED,
        last_checked=now,
        created_by=caller.user.id,
    )
    await repository.add(connection)
    await caller.audit(
        session,
        "gateway_connection.create",
        entity_type="gateway_connection",
        entity_id=connection.id,
        module=MODULE,
        summary=f"created gateway connection {connection.name} ({connector.id})",
        after=_snapshot(connection),
    )
    return connection


async def replace(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    connection_id: uuid.UUID,
    data: GatewayConnectionWrite,
    outbound: Outbound,
    box: SecretBox,
    now: datetime,
) -> GatewayConnection:
    """Replace name and configuration, full credentials included, once the check passed."""
    connection = await get(session=session, connection_id=connection_id)
    if data.source != connection.source:
        raise ValidationFailed.at(
            "/source",
            f"a connection's source cannot change (it is '{connection.source}'); "
            "create another connection",
        )
    connector = _connector(connection.source)
    config = validate_config(connector, data.config)
    repository = GatewayConnectionRepository(session)
    await _refuse_taken(repository, data.name, besides=connection.id)
    before = _snapshot(connection)
    await end_reads(session)
    await _check_or_refuse(connector, config, outbound)
    reread = await repository.reread(connection_id)  # deleted while it was checked?
    if reread is None:
        raise ConnectionNotFound()
    connection = reread
    await _refuse_taken(repository, data.name, besides=connection.id)
    public, secret = _split(connector, config)
    connection.name = data.name
    connection.config = public
    connection.sealed_secrets = _seal(box, secret)
    connection.status = ConnectionStatus.CONNECTED
    connection.last_checked = now
    connection.updated_at = now
    await session.flush()
    await caller.audit(
        session,
        "gateway_connection.update",
        entity_type="gateway_connection",
        entity_id=connection.id,
        module=MODULE,
        summary=f"replaced gateway connection {connection.name}",
        before=before,
        after=_snapshot(connection),
    )
    return connection


async def delete(*, session: AsyncSession, caller: SiteCaller, connection_id: uuid.UUID) -> None:
    connection = await get(session=session, connection_id=connection_id)
    before = _snapshot(connection)
    await GatewayConnectionRepository(session).delete(connection)
    await caller.audit(
        session,
        "gateway_connection.delete",
        entity_type="gateway_connection",
        entity_id=connection_id,
        module=MODULE,
        summary=f"deleted gateway connection {before['name']}",
        before=before,
    )


def validate_config(connector: Connector, config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` checked against the connector's fields: every required one present, each
    of its type, no other. Refusals point at ``/config/<field>``."""
    errors: list[dict[str, str]] = []
    known = {f.name for f in connector.connection_fields}
    for name in config:
        if name not in known:
            errors.append(
                {
                    "pointer": f"/config/{_escape(name)}",
                    "detail": f"unknown field; a {connector.id} connection takes "
                    + ", ".join(sorted(known)),
                }
            )
    out: dict[str, Any] = {}
    for spec in connector.connection_fields:
        pointer = f"/config/{spec.name}"
        if spec.name not in config or config[spec.name] is None:
            if spec.required:
                errors.append({"pointer": pointer, "detail": "required"})
            continue
        value = config[spec.name]
        problem = _type_problem(spec.type, value)
        if problem is not None:
            errors.append({"pointer": pointer, "detail": problem})
        else:
            out[spec.name] = value
    if errors:
        raise ValidationFailed(errors)
    return out


def _type_problem(kind: str, value: Any) -> str | None:
    if kind == "url_list":
        if not isinstance(value, list) or not value:
            return "a non-empty list of http(s) URLs"
        if len(value) > MAX_URLS:
            return f"at most {MAX_URLS} URLs"
        for index, item in enumerate(value):
            problem = _type_problem("url", item)
            if problem is not None:
                return f"item {index}: {problem}"
        return None
    if not isinstance(value, str) or not value:
        return "a non-empty string"
    if len(value) > MAX_TEXT:
        return f"at most {MAX_TEXT} characters"
    if kind == "url" and not _URL.match(value):
        return "an absolute http(s) URL (no credentials in it)"
    return None


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _connector(source: str) -> Connector:
    connector = CONNECTORS.get(source)
    if connector is None:
        raise ValidationFailed.at(
            "/source", f"unknown source type '{source}'; one of: " + ", ".join(CONNECTORS)
        )
    return connector


async def _check(
    connector: Connector, config: Mapping[str, Any], outbound: Outbound, now: datetime
) -> CheckResult:
    try:
        await connector.check(config, outbound)
    except ConnectorError as failed:
        return CheckResult(ok=False, detail=failed.message, field=failed.field, checked_at=now)
    return CheckResult(ok=True, detail=None, field=None, checked_at=now)


async def _check_or_refuse(
    connector: Connector, config: Mapping[str, Any], outbound: Outbound
) -> None:
    try:
        await connector.check(config, outbound)
    except ConnectorError as failed:
        pointer = f"/config/{failed.field}" if failed.field else "/config"
        raise ConnectionCheckFailed(
            failed.message, errors=[{"pointer": pointer, "detail": failed.message}]
        ) from None


async def _refuse_taken(
    repository: GatewayConnectionRepository, name: str, *, besides: uuid.UUID | None = None
) -> None:
    if await repository.name_taken(name, besides=besides):
        raise ConnectionNameTaken(f"a gateway connection is already named '{name}'")


def _split(
    connector: Connector, config: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    secret = connector.secret_fields
    public = {k: v for k, v in config.items() if k not in secret}
    return public, {k: v for k, v in config.items() if k in secret}


def _seal(box: SecretBox, secrets: Mapping[str, Any]) -> str:
    return box.encrypt(json.dumps(dict(secrets), separators=(",", ":")))


def _open(box: SecretBox, sealed: str) -> dict[str, Any]:
    """The secret fields; ``ValueError`` when the server's keys no longer open them."""
    if not sealed:
        return {}
    opened = json.loads(box.decrypt(sealed))
    if not isinstance(opened, dict):
        raise ValueError("sealed secrets are not an object")
    return opened


def _snapshot(connection: GatewayConnection) -> dict[str, Any]:
    return GatewayConnectionRead.of(connection).model_dump(mode="json")


def _filters(raw: Mapping[str, str]) -> ConnectionFilters:
    values = FilterValues(raw)
    status = values.choice("status", ConnectionStatus)
    values.check()
    return ConnectionFilters(source=raw.get("source"), status=status, name=raw.get("name"))
