from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Response

from portico.core.db.session import SessionDep
from portico.core.errors import ValidationFailed
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.gateway.plugins.base import Category
from portico.gateway.plugins.registry import PLUGINS
from portico.management.access import OrgCaller, parse_id, require
from portico.management.environment import service as environment_service
from portico.management.environment.models import Environment
from portico.management.environment.repository import EnvironmentRepository
from portico.management.environment.service import EnvironmentNotFound
from portico.management.plugin import service as plugin_service
from portico.management.plugin.schemas import (
    GlobalPluginChange,
    GlobalPluginList,
    GlobalPluginRead,
    PluginSchemaPage,
    PluginSchemaRead,
)

router = APIRouter(prefix="/api/orgs/{orgId}", tags=["plugins"])
Reader = Annotated[OrgCaller, Depends(require("api.read"))]
GlobalManager = Annotated[OrgCaller, Depends(require("plugin.global"))]
LIST = ListSpec(
    sortable=frozenset({"order", "name"}),
    default_sort="order",
    filterable=frozenset({"category"}),
    max_size=100,
    default_size=50,
)
_CATEGORIES = {c.value for c in Category}


@router.get("/plugin-schemas", response_model=PluginSchemaPage)
async def list_plugin_schemas(
    caller: Reader, query: ListQuery = Depends(list_query(LIST))
) -> PluginSchemaPage:
    """Every plugin the gateway knows (each acts on traffic), with the JSON Schema of its
    configuration."""
    category = query.filters.get("category")
    if category is not None and category not in _CATEGORIES:
        raise ValidationFailed(
            [
                {
                    "parameter": "category",
                    "detail": f"category: one of {', '.join(sorted(_CATEGORIES))}",
                }
            ]
        )
    specs = [s for s in PLUGINS.values() if category is None or s.category.value == category]
    for key in reversed(query.sort):
        specs.sort(key=lambda s: getattr(s, key.name), reverse=key.descending)
    window = specs[query.offset : query.offset + query.size]
    return PluginSchemaPage(
        items=[plugin_service.schema_of(s) for s in window],
        page=query.page,
        size=query.size,
        total=len(specs),
    )


@router.get("/plugin-schemas/{pluginName}", response_model=PluginSchemaRead)
async def get_plugin_schema(pluginName: str, caller: Reader) -> PluginSchemaRead:
    return plugin_service.schema_of(plugin_service.get_spec(pluginName))


GLOBAL = "/envs/{envId}/global-plugins"


async def _env(session: SessionDep, caller: OrgCaller, env_id: str) -> Environment:
    return await environment_service.get(
        session=session, caller=caller, env_id=parse_id(env_id, EnvironmentNotFound)
    )


@router.get(GLOBAL, response_model=GlobalPluginList)
async def list_global_plugins(
    envId: str, caller: GlobalManager, session: SessionDep
) -> GlobalPluginList:
    env = await _env(session, caller, envId)
    rows = await plugin_service.list_global(session=session, env=env)
    return GlobalPluginList(
        items=[plugin_service.read_global(r) for r in rows],
        config_version=await EnvironmentRepository(session).latest_version(env.id),
    )


@router.get(GLOBAL + "/{pluginName}", response_model=GlobalPluginRead)
async def get_global_plugin(
    envId: str, pluginName: str, caller: GlobalManager, session: SessionDep
) -> GlobalPluginRead:
    """One global plugin of the environment; 404 when it is not configured there."""
    env = await _env(session, caller, envId)
    return plugin_service.read_global(
        await plugin_service.get_global(session=session, env=env, name=pluginName)
    )


@router.put(GLOBAL + "/{pluginName}", response_model=GlobalPluginChange)
async def put_global_plugin(
    envId: str,
    pluginName: str,
    caller: GlobalManager,
    session: SessionDep,
    config: Annotated[dict[str, Any], Body(description="The plugin's configuration.")],
) -> GlobalPluginChange:
    """Attach (or replace) a plugin on every route of the environment."""
    env = await _env(session, caller, envId)
    row, version = await plugin_service.put_global(
        session=session, caller=caller, env=env, name=pluginName, config=config
    )
    return GlobalPluginChange(
        **plugin_service.read_global(row).model_dump(), config_version=version
    )


@router.delete(GLOBAL + "/{pluginName}", status_code=204)
async def delete_global_plugin(
    envId: str, pluginName: str, caller: GlobalManager, session: SessionDep
) -> Response:
    env = await _env(session, caller, envId)
    await plugin_service.delete_global(session=session, caller=caller, env=env, name=pluginName)
    return Response(status_code=204)
