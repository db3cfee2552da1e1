"""Plugin schemas (generated from the runtime's own models) and global plugins."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import NotFound, ValidationFailed
from portico.core.schema import NUL_REFUSED, find_nul
from portico.core.validation import json_path, json_pointer
from portico.gateway.plugins.base import SEALED_PREFIX, PluginSpec, secret_reference
from portico.gateway.plugins.registry import (
    PLUGINS,
    PluginCheckError,
    check_plugin,
    effective_order,
)
from portico.management.access import OrgCaller
from portico.management.environment.models import Environment
from portico.management.environment.ports import publish
from portico.management.plugin.attachments import PluginConfigInvalid
from portico.management.plugin.models import GlobalPlugin
from portico.management.plugin.repository import GlobalPluginRepository
from portico.management.plugin.schemas import GlobalPluginRead, PluginSchemaRead


class PluginNotFound(NotFound):
    default_detail = "plugin not found"


class GlobalPluginNotFound(NotFound):
    default_detail = "global plugin not found"


def schema_of(spec: PluginSpec) -> PluginSchemaRead:
    schema = spec.json_schema()
    return PluginSchemaRead(
        name=spec.name,
        category=spec.category.value,
        order=spec.order,
        reorderable=spec.reorderable,
        description=spec.description,
        schema_=schema,
        consumer_schema=spec.consumer_schema(),
        required=list(schema.get("required", [])),
    )


def get_spec(name: str) -> PluginSpec:
    spec = PLUGINS.get(name)
    if spec is None:
        raise PluginNotFound(f"plugin {name!r} not found (plugin names are case-sensitive)")
    return spec


def read_global(row: GlobalPlugin) -> GlobalPluginRead:
    spec, config = check_plugin(row.name, row.config)
    return GlobalPluginRead(
        name=row.name,
        category=spec.category.value,
        order=effective_order(spec, config),
        config=row.config,
    )


async def list_global(*, session: AsyncSession, env: Environment) -> list[GlobalPlugin]:
    return await GlobalPluginRepository(session).of_environment(env.id)


async def get_global(*, session: AsyncSession, env: Environment, name: str) -> GlobalPlugin:
    get_spec(name)
    row = await GlobalPluginRepository(session).get(env.id, name)
    if row is None:
        raise GlobalPluginNotFound(f"plugin {name!r} is not a global plugin of {env.name}")
    return row


def _no_reference(spec: PluginSpec, config: Any) -> None:
    """A global plugin is published as it is set: no deploy resolves a secret reference in
    it, so the secret itself is given here (``$env://``, ``$secret://`` are a revision's)."""
    for field in sorted(spec.config.secret_references):
        value = config.get(field) if isinstance(config, dict) else None
        if not isinstance(value, str):
            continue
        if value.startswith(SEALED_PREFIX) or secret_reference(value) is not None:
            raise PluginCheckError(
                spec.name,
                f"{field}: references are resolved when a revision is deployed; a global "
                "plugin takes the secret itself",
                f"/{field}",
            )


async def put_global(
    *, session: AsyncSession, caller: OrgCaller, env: Environment, name: str, config: Any
) -> tuple[GlobalPlugin, int]:
    get_spec(name)
    nul = find_nul(config)
    if nul is not None:
        raise ValidationFailed.at(json_pointer(nul), f"{json_path(nul)}: {NUL_REFUSED}")
    try:
        spec, _ = check_plugin(name, config)  # the runtime's own check, with its messages
        _no_reference(spec, config)
    except PluginCheckError as error:
        raise PluginConfigInvalid(
            error.message, errors=[{"pointer": error.pointer, "detail": error.reason}]
        ) from None
    row = await GlobalPluginRepository(session).get(env.id, name)
    before = dict(row.config) if row is not None else None
    if row is None:
        row = GlobalPlugin(environment_id=env.id, name=name, org_id=caller.org_id, config=config)
        session.add(row)
    else:
        row.config = config
    await session.flush()
    published = await publish(session, env, f"global plugin {name} set")
    await caller.audit(
        session,
        "global_plugin.put",
        env.id,
        before=before,
        after=config,
        summary=f"{name} on {env.name} (config version {published.version})",
    )
    return row, published.version


async def delete_global(
    *, session: AsyncSession, caller: OrgCaller, env: Environment, name: str
) -> int:
    row = await GlobalPluginRepository(session).get(env.id, name)
    if row is None:
        raise GlobalPluginNotFound()
    before = dict(row.config)
    await session.delete(row)
    await session.flush()
    published = await publish(session, env, f"global plugin {name} removed")
    await caller.audit(
        session,
        "global_plugin.delete",
        env.id,
        before=before,
        summary=f"{name} removed from {env.name} (config version {published.version})",
    )
    return published.version
