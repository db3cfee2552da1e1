"""A revision, as it will run in one environment: its routes with their effective plugins.

The deploy checks of management-api.md run here, in their order: every route carries
``plugins``; the revision is bound to an upstream of the environment; every plugin
configuration at every scope passes the runtime's own check (``check_plugin``); no route's
effective plugins hold a pair that cannot run together (``check_combination``). The same
compilation produces the routes of the environment snapshot, so what was validated is what
the gateway receives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from portico.core.errors import BadRequest, ValidationFailed
from portico.core.validation import json_pointer
from portico.gateway.plugins.registry import PLUGINS
from portico.gateway.snapshot import PluginAttachment, SnapshotRoute
from portico.management.plugin.attachments import (
    check_attachments,
    check_combination,
    effective_plugins,
)

UPSTREAM_NOT_CONFIGURED = "Upstream not configured for environment"
PLUGINS_REQUIRED = "required property 'plugins' not found"


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
    #: the secrets its deployment resolved (``deployment.secrets``): pointer → sealed value
    sealed: Mapping[str, str] = field(default_factory=dict)


def compile_revision(
    source: RevisionSource, global_plugins: Sequence[PluginAttachment]
) -> list[SnapshotRoute]:
    """The revision's routes for one environment, or the first deploy error."""
    _require_route_plugins(source.route_spec)
    if source.upstream_id is None:
        raise BadRequest(UPSTREAM_NOT_CONFIGURED)
    service = check_attachments(source.service_spec.get("plugins") or {}, "service", "/serviceSpec")
    service = with_sealed(service, "/serviceSpec", source.sealed)
    routes: list[SnapshotRoute] = []
    for index, route in enumerate(source.route_spec):
        pointer = f"/routeSpec/{index}"
        own = with_sealed(
            check_attachments(route["plugins"], "route", pointer), pointer, source.sealed
        )
        name = str(route.get("name") or f"route-{index}")
        plugins = effective_plugins(global_plugins, service, own)
        check_combination(plugins, pointer, name)
        routes.append(
            SnapshotRoute(
                id=f"{source.revision_id}:{index}",
                api_id=source.api_id,
                api_name=source.api_name,
                revision_id=source.revision_id,
                revision_number=source.revision_number,
                name=name,
                uri=str(route["uri"]),
                methods=list(route.get("methods") or []),
                hosts=list(route.get("hosts") or source.service_spec.get("hosts") or []),
                priority=int(route.get("priority") or 0),
                status=int(route.get("status", 1)),
                upstream_id=source.upstream_id,
                plugins=plugins,
            )
        )
    return routes


def with_sealed(
    attachments: list[PluginAttachment], at: str, sealed: Mapping[str, str]
) -> list[PluginAttachment]:
    """``attachments`` of the scope at ``at`` with their reference fields given the sealed
    values the deployment resolved (those it resolved nothing for are left as they are: a
    gateway then refuses the route's traffic, 503, rather than run without the secret)."""
    if not sealed:
        return attachments
    out: list[PluginAttachment] = []
    for attachment in attachments:
        spec = PLUGINS.get(attachment.name)
        update: dict[str, Any] = {}
        for name in spec.config.secret_references if spec is not None else ():
            found = sealed.get(f"{at}/plugins{json_pointer([attachment.name, name])}")
            if found is not None:
                update[name] = found
        if update:
            attachment = attachment.model_copy(update={"config": {**attachment.config, **update}})
        out.append(attachment)
    return out


def _require_route_plugins(route_spec: Sequence[Any]) -> None:
    for index, route in enumerate(route_spec):
        if not isinstance(route, Mapping) or "plugins" not in route:
            raise ValidationFailed(
                [{"pointer": f"/routeSpec/{index}/plugins", "detail": PLUGINS_REQUIRED}]
            )
