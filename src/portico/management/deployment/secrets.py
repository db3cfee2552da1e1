"""The secrets a revision's plugins name, resolved at deploy (the seed's ``$env://NAME`` and
``$secret://NAME``) and sealed for gateways.

Every field a plugin declares in ``secret_references`` (edge-auth's ``signing_secret``) is
resolved: a literal as it is, ``$env://NAME`` from the control plane's environment,
``$secret://NAME`` from the organisation's secret store. The value is checked by the plugin's
own rules once resolved (edge-auth: at least 32 bytes), then sealed with the key gateways
hold (``core.sealing``, as jwt-auth consumer secrets travel) and kept on the deployment, so
that every snapshot it is published in carries the same sealed value and never the secret.
A reference that resolves to nothing is a 400 naming it: the seed product deploys such a
route and then answers 401 to everyone.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.sealing import secret_box
from portico.core.validation import json_pointer
from portico.gateway.plugins.base import SEALED_PREFIX, secret_reference
from portico.gateway.plugins.registry import PLUGINS, PluginCheckError, check_plugin
from portico.management.deployment.compiler import RevisionSource
from portico.management.plugin.attachments import PluginConfigInvalid
from portico.management.secret import service as secret_service


def _fields(source: RevisionSource) -> Iterator[tuple[str, str, str, Any, Mapping[str, Any]]]:
    """``(pointer, plugin, field, value, config)`` of every reference field a revision sets."""
    scopes: list[tuple[str, Any]] = [("/serviceSpec", source.service_spec.get("plugins"))]
    scopes += [
        (f"/routeSpec/{index}", route.get("plugins") if isinstance(route, Mapping) else None)
        for index, route in enumerate(source.route_spec)
    ]
    for at, plugins in scopes:
        if not isinstance(plugins, Mapping):
            continue
        for name, config in plugins.items():
            spec = PLUGINS.get(name)
            if spec is None or not isinstance(config, Mapping):
                continue
            for field in sorted(spec.config.secret_references):
                value = config.get(field)
                if isinstance(value, str):
                    yield f"{at}/plugins{json_pointer([name, field])}", name, field, value, config


def _refused(plugin: str, pointer: str, reason: str) -> PluginConfigInvalid:
    error = PluginCheckError(plugin, reason)
    return PluginConfigInvalid(error.message, errors=[{"pointer": pointer, "detail": reason}])


async def seal_secrets(
    session: AsyncSession, org_id: uuid.UUID, source: RevisionSource, keys: tuple[str, ...]
) -> dict[str, str]:
    """Pointer → sealed value for every reference field of the revision; the first one
    that cannot be resolved, or whose value the plugin refuses, is a 400 naming it."""
    sealed: dict[str, str] = {}
    box = secret_box(keys)
    for pointer, plugin, field, value, config in _fields(source):
        if value.startswith(SEALED_PREFIX):
            raise _refused(
                plugin,
                pointer,
                f"{field}: {SEALED_PREFIX} values are written by deploy; give the secret, "
                "$env://NAME or $secret://NAME",
            )
        try:
            reference = secret_reference(value)
        except ValueError as error:  # (the deploy's plugin check said so already)
            raise _refused(plugin, pointer, f"{field}: {error}") from None
        found: str | None
        if reference is None:
            found = value
        elif reference[0] == "env":
            found = os.environ.get(reference[1]) or None
            if found is None:
                raise _refused(
                    plugin,
                    pointer,
                    f"{field}: {value} resolves to nothing: the control plane has no "
                    f"environment variable {reference[1]}",
                )
        else:
            found = await secret_service.reveal(session, org_id, reference[1], keys)
            if found is None:
                raise _refused(
                    plugin,
                    pointer,
                    f"{field}: {value} resolves to nothing: this organisation stores no secret "
                    f"named {reference[1]!r}",
                )
        clear: str = found
        try:  # the plugin's own rules on the value itself (a short HMAC key...)
            check_plugin(plugin, {**config, field: clear})
        except PluginCheckError as error:
            where = (
                f"{value} gives a value the plugin refuses: {error.reason}"
                if reference is not None
                else error.reason
            )
            raise _refused(plugin, pointer, where) from None
        sealed[pointer] = SEALED_PREFIX + box.encrypt(clear)
    return sealed
