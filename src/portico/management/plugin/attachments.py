"""Plugin attachments: a scope's ``plugins`` map checked through the runtime's own check
(``registry.check_plugin``) into the attachments a snapshot carries. Every scope uses them:
global plugins, consumers, a revision's service and routes when deployed
(``deployment.compiler``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from portico.core.errors import BadRequest, ValidationFailed
from portico.core.validation import json_pointer
from portico.gateway.plugins.registry import (
    PluginCheckError,
    check_plugin,
    conflicting,
    effective_order,
)
from portico.gateway.snapshot import PluginAttachment, Scope


class PluginConfigInvalid(BadRequest):
    kind = "plugin-configuration"
    title = "Plugin Configuration Invalid"
    description = (
        "A plugin attached to what is being deployed has a configuration its plugin refuses "
        "(checked at deploy time, against the plugin's schema and rules). `detail` names the "
        "plugin and the reason; fix the configuration, or remove the plugin, and deploy again."
    )


class PluginConflict(BadRequest):
    kind = "plugin-conflict"
    title = "Plugins Conflict"
    description = (
        "Two plugins that cannot run on one route reach it together, from any scope (global, "
        "service, route): xml-to-json and json-to-xml would each convert the other's output. "
        "`detail` names the pair and the route; remove one of them and deploy again."
    )


def check_combination(plugins: Sequence[PluginAttachment], pointer: str, route: str) -> None:
    """Refuse a route whose effective plugins hold a pair that cannot run together."""
    pair = conflicting(attachment.name for attachment in plugins)
    if pair is not None:
        first, second = sorted(pair)
        detail = f"plugins {first} and {second} cannot be attached to the same route"
        raise PluginConflict(
            f"{detail} (route '{route}')",
            errors=[{"pointer": f"{pointer}/plugins", "detail": detail}],
        )


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
