"""Consumers: create, read, change, delete; every change audited and published to every
environment of the organisation (consumers belong to the org, so each environment's gateways
authenticate them)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import Conflict, NotFound
from portico.core.pagination import ListQuery, Page
from portico.core.validation import json_pointer
from portico.gateway.plugins.registry import PluginCheckError
from portico.management.access import OrgCaller
from portico.management.consumer import credentials, ports
from portico.management.consumer.credentials import SecretBox
from portico.management.consumer.models import Consumer
from portico.management.consumer.repository import ConsumerRepository
from portico.management.consumer.schemas import ConsumerCreate, ConsumerRead, ConsumerUpdate
from portico.management.environment.ports import publish
from portico.management.environment.repository import EnvironmentRepository
from portico.management.plugin.attachments import PluginConfigInvalid


class ConsumerNotFound(NotFound):
    default_detail = "consumer not found"


@dataclass
class Written:
    """A created or changed consumer, with the credentials generated for it (shown once)."""

    consumer: Consumer
    generated: dict[str, dict[str, str]] = field(default_factory=dict)


def snapshot(consumer: Consumer) -> dict[str, Any]:
    return ConsumerRead.model_validate(consumer).model_dump(mode="json")


async def get(*, session: AsyncSession, caller: OrgCaller, consumer_id: uuid.UUID) -> Consumer:
    consumer = await ConsumerRepository(session).get_in_org(caller.org_id, consumer_id)
    if consumer is None:
        raise ConsumerNotFound()
    return consumer


async def list_(*, session: AsyncSession, caller: OrgCaller, query: ListQuery) -> Page[Consumer]:
    repository = ConsumerRepository(session)
    return await repository.page_in_org(caller.org_id, query)


async def create(
    *, session: AsyncSession, caller: OrgCaller, data: ConsumerCreate, box: SecretBox
) -> Written:
    repository = ConsumerRepository(session)
    plugins, generated = prepare_plugins(data.plugins, {}, box)
    if await repository.name_taken(caller.org_id, data.username):
        raise Conflict(f"a consumer named '{data.username}' already exists")
    await check_credentials_free(repository, caller.org_id, plugins, {}, None)
    consumer = Consumer(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        username=data.username,
        description=data.description,
        plugins=plugins,
    )
    await repository.add(consumer)
    await _publish(session, caller, f"consumer {consumer.username} created")
    await caller.audit(session, "consumer.create", consumer.id, after=snapshot(consumer))
    return Written(consumer, generated)


async def _not_owned(session: AsyncSession, consumer: Consumer) -> None:
    """An app's consumer changes with its app (whose environment, status and products its
    snapshot entry depends on), never on its own."""
    app = await ports.owning_app(session, consumer.id)
    if app is not None:
        raise Conflict(f"consumer belongs to app '{app.name}'; change it through /apps/{app.id}")


async def update(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    consumer_id: uuid.UUID,
    data: ConsumerUpdate,
    box: SecretBox,
) -> Written:
    repository = ConsumerRepository(session)
    consumer = await get(session=session, caller=caller, consumer_id=consumer_id)
    await _not_owned(session, consumer)
    before = snapshot(consumer)
    generated: dict[str, dict[str, str]] = {}
    plugins = None
    if data.plugins is not None:
        plugins, generated = prepare_plugins(data.plugins, consumer.plugins or {}, box)
    if data.username is not None and await repository.name_taken(
        caller.org_id, data.username, except_id=consumer.id
    ):
        raise Conflict(f"a consumer named '{data.username}' already exists")
    if plugins is not None:
        await check_credentials_free(
            repository, caller.org_id, plugins, consumer.plugins or {}, consumer.id
        )
        consumer.plugins = plugins
    if data.username is not None:
        consumer.username = data.username
    if data.description is not None:
        consumer.description = data.description
    await session.flush()
    await session.refresh(consumer)
    if data.username is not None or plugins is not None:  # what gateways hold of it
        await _publish(session, caller, f"consumer {consumer.username} changed")
    await caller.audit(
        session, "consumer.update", consumer.id, before=before, after=snapshot(consumer)
    )
    return Written(consumer, generated)


async def delete(*, session: AsyncSession, caller: OrgCaller, consumer_id: uuid.UUID) -> None:
    consumer = await get(session=session, caller=caller, consumer_id=consumer_id)
    await _not_owned(session, consumer)
    before = snapshot(consumer)
    await ConsumerRepository(session).delete(consumer)
    await _publish(session, caller, f"consumer {consumer.username} deleted")
    await caller.audit(session, "consumer.delete", consumer_id, before=before)


def prepare_plugins(
    sent: dict[str, dict[str, Any]], current: dict[str, Any], box: SecretBox
) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
    """The stored ``plugins`` for what a client sent, and the credentials generated; every
    plugin's failure is reported, each at ``/plugins/<name>/...``."""
    stored: dict[str, Any] = {}
    generated: dict[str, dict[str, str]] = {}
    failures: list[PluginCheckError] = []
    for name, raw in sent.items():
        try:
            stored[name], shown = credentials.prepare(name, raw, current.get(name), box)
        except PluginCheckError as error:
            failures.append(error)
            continue
        if shown is not None:
            generated[name] = shown
    if failures:
        raise PluginConfigInvalid(
            failures[0].message,
            errors=[
                {"pointer": f"/plugins{json_pointer([f.plugin])}{f.pointer}", "detail": f.reason}
                for f in failures
            ],
        )
    return stored, generated


async def check_credentials_free(
    repository: ConsumerRepository,
    org_id: uuid.UUID,
    plugins: dict[str, Any],
    current: dict[str, Any],
    consumer_id: uuid.UUID | None,
) -> None:
    """A gateway finds the consumer by its credential: no two consumers of an org may hold
    the same key, username, JWT key or DN (keys compared by their hashes)."""
    for plugin, (stored_field, sent_field) in credentials.IDENTITY.items():
        value = (plugins.get(plugin) or {}).get(stored_field)
        if value is None or (current.get(plugin) or {}).get(stored_field) == value:
            continue
        if await repository.credential_taken(
            org_id, plugin, stored_field, str(value), except_id=consumer_id
        ):
            detail = f"{sent_field} already in use by another consumer"
            pointer = f"/plugins{json_pointer([plugin, sent_field])}"
            raise Conflict(detail, errors=[{"pointer": pointer, "detail": detail}])


async def _publish(session: AsyncSession, caller: OrgCaller, reason: str) -> None:
    # in id order, so that two transactions lock the same environments in the same order
    for env in await EnvironmentRepository(session).all_in_org_by_id(caller.org_id):
        await publish(session, env, reason)
