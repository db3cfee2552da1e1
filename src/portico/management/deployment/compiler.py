"""A revision, as it will run in one environment: its routes with their effective plugins.

The deploy checks of management-api.md run here, in their order: every route carries
``plugins``; the revision is bound to an upstream of the environment; every plugin
configuration at every scope passes the runtime's own check (``check_plugin``). The same
compilation produces the routes of the environment snapshot, so what was validated is what
the gateway receives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from portico.core.errors import BadRequest, ValidationFailed
from portico.core.validation import json_pointer
from portico.gateway.plugins.registry import (
    PluginCheckError,
    check_plugin,
    check_runnable,
    effective_order,
)
from portico.gateway.snapshot import PluginAttachment, Scope, SnapshotConsumer, SnapshotRoute

UPSTREAM_NOT_CONFIGURED = "Upstream not configured for environment"
PLUGINS_REQUIRED = "required property 'plugins' not found"


class PluginConfigInvalid(BadRequest):
    kind = "plugin-configuration"
    title = "Plugin Configuration Invalid"
    description = (
        "A plugin attached to what is being deployed has a configuration its plugin refuses "
        "(checked at deploy time, against the plugin's schema and rules), or is a plugin the "
        "gateway cannot run yet (`plugin X cannot act on traffic yet`: `runs` is false in "
        "/plugin-schemas). `detail` names the plugin and the reason; fix the configuration, "
        "or remove the plugin, and deploy again."
    )


@dataclass(frozen=True)
class RevisionSource:
    """What the compiler needs of a revision, detached from the ORM."""

    api_id: str
    api_name: str
    revision_id: str
    revision_number: int
    service_spec: Mapping[str, Any]
    route_spec: Sequence[Any]
    upstream_id: str | None  # bound for the environment being compiled for


def compile_revision(
    source: RevisionSource, global_plugins: Sequence[PluginAttachment]
) -> list[SnapshotRoute]:
    """The revision's routes for one environment, or the first deploy error."""
    _require_route_plugins(source.route_spec)
    if source.upstream_id is None:
        raise BadRequest(UPSTREAM_NOT_CONFIGURED)
    service = _attachments(source.service_spec.get("plugins") or {}, "service", "/serviceSpec")
    routes: list[SnapshotRoute] = []
    for index, route in enumerate(source.route_spec):
        pointer = f"/routeSpec/{index}"
        own = _attachments(route["plugins"], "route", pointer)
        routes.append(
            SnapshotRoute(
                id=f"{source.revision_id}:{index}",
                api_id=source.api_id,
                api_name=source.api_name,
                revision_id=source.revision_id,
                revision_number=source.revision_number,
                name=str(route.get("name") or f"route-{index}"),
                uri=str(route["uri"]),
                methods=list(route.get("methods") or []),
                hosts=list(route.get("hosts") or source.service_spec.get("hosts") or []),
                priority=int(route.get("priority") or 0),
                status=int(route.get("status", 1)),
                upstream_id=source.upstream_id,
                plugins=effective_plugins(global_plugins, service, own),
            )
        )
    return routes


def effective_plugins(*scopes: Sequence[PluginAttachment]) -> list[PluginAttachment]:
    """Wider scopes first; a narrower attachment of a plugin REPLACES the wider one (no merge,
    as the seed says). Ordered by effective order, then name, so the chain is deterministic."""
    chosen: dict[str, PluginAttachment] = {}
    for scope in scopes:
        for attachment in scope:
            chosen[attachment.name] = attachment
    return sorted(chosen.values(), key=lambda a: (a.order, a.name))


def check_attachments(plugins: Any, scope: Scope, pointer: str) -> list[PluginAttachment]:
    """Validate a ``plugins`` map of one scope through the runtime's check."""
    return _attachments(plugins, scope, pointer)


def require_runnable(
    global_plugins: Sequence[PluginAttachment],
    routes: Sequence[SnapshotRoute],
    consumers: Sequence[SnapshotConsumer],
) -> None:
    """Every plugin that would act on the traffic of ``routes`` (compiled from one revision:
    route ``i`` from ``routeSpec[i]``), at every scope, is one the gateway runs
    (``check_runnable``); otherwise a deploy would put routes in service that answer 503 (or
    a consumer's plugin that nothing enforces). Consumers' credentials are data that the
    route's authentication plugin reads, not plugins of their own."""
    for attachment in global_plugins:
        _runnable(attachment.name, "/globalPlugins", "global scope")
    for index, route in enumerate(routes):
        for attachment in route.plugins:
            if attachment.scope == "service":
                _runnable(attachment.name, "/serviceSpec", "service scope")
            elif attachment.scope == "route":
                _runnable(attachment.name, f"/routeSpec/{index}", f"route {route.name}")
    for index, consumer in enumerate(consumers):
        for attachment in consumer.plugins:
            _runnable(attachment.name, f"/consumers/{index}", f"consumer {consumer.username}")


def _runnable(name: str, pointer: str, where: str) -> None:
    try:
        check_runnable(name)
    except PluginCheckError as error:
        raise PluginConfigInvalid(
            error.message,
            errors=[
                {
                    "pointer": f"{pointer}/plugins{json_pointer([name])}",
                    "detail": f"{error.reason} ({where})",
                }
            ],
        ) from None


def _attachments(plugins: Any, scope: Scope, pointer: str) -> list[PluginAttachment]:
    if not isinstance(plugins, Mapping):
        raise ValidationFailed.at(f"{pointer}/plugins", f"{pointer}/plugins: object expected")
    out: list[PluginAttachment] = []
    for name, raw in plugins.items():
        try:
            spec, config = check_plugin(str(name), raw)
        except PluginCheckError as error:
            where = f"{pointer}/plugins{json_pointer([str(name)])}{error.pointer}"
            raise PluginConfigInvalid(
                error.message, errors=[{"pointer": where, "detail": error.reason}]
            ) from None
        out.append(
            PluginAttachment(
                name=spec.name,
                scope=scope,
                order=effective_order(spec, config),
                config=config.model_dump(mode="json", by_alias=True, exclude={"meta"}),
            )
        )
    return out


def _require_route_plugins(route_spec: Sequence[Any]) -> None:
    for index, route in enumerate(route_spec):
        if not isinstance(route, Mapping) or "plugins" not in route:
            raise ValidationFailed(
                [{"pointer": f"/routeSpec/{index}/plugins", "detail": PLUGINS_REQUIRED}]
            )
