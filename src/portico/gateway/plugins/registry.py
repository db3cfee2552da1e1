"""Every plugin, by its public (case-sensitive) name, and the one configuration check that
both the management service (at deploy) and the runtime (when it builds a chain) use."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any

from pydantic import ValidationError

from portico.core.validation import describe, json_pointer
from portico.gateway import plugins as plugins_package
from portico.gateway.plugins.base import PluginConfig, PluginSpec

#: modules of the package that are not plugins
_NOT_PLUGINS = frozenset({"base", "registry"})


def _plugin_modules() -> list[ModuleType]:
    """Every module of this package is a plugin (exporting ``PLUGIN``), as every file of
    APISIX's ``apisix/plugins`` is: adding a plugin is adding its module, or its package
    (whose ``__init__`` exports ``PLUGIN``; see the package's docstring)."""
    names = sorted(
        {
            info.name
            for info in pkgutil.iter_modules(plugins_package.__path__)
            if info.name not in _NOT_PLUGINS and not info.name.startswith("_")
        }
    )
    return [importlib.import_module(f"{plugins_package.__name__}.{name}") for name in names]


def _collect() -> Mapping[str, PluginSpec]:
    specs: dict[str, PluginSpec] = {}
    for module in _plugin_modules():
        spec: PluginSpec = module.PLUGIN
        if spec.name in specs:
            raise RuntimeError(f"two plugins named {spec.name!r}")
        if spec.runtime is None:
            # Every plugin the schema endpoint lists acts on traffic: a plugin lands with its
            # runtime, never as a schema that deploys refuse or gateways answer 503 for.
            raise RuntimeError(f"plugin {spec.name!r} has no runtime")
        specs[spec.name] = spec
    return MappingProxyType(dict(sorted(specs.items(), key=lambda kv: (kv[1].order, kv[0]))))


PLUGINS: Mapping[str, PluginSpec] = _collect()

#: the seed product's names for plugins Portico has under a name of its own. Its OpenAPI
#: documents (``x-helix-gateway``) and revision specs may use them; what is stored, checked
#: and run is always Portico's name.
ALIASES: Mapping[str, str] = MappingProxyType(
    {"helix-auth": "edge-auth", "api-product-enforcer": "product-quota"}
)


def canonical_name(name: str) -> str:
    """Portico's name of the plugin called ``name`` (``name`` itself unless an alias)."""
    return ALIASES.get(name, name)


def canonical_plugins(plugins: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``plugins`` (name → config) under Portico's names, in the order given, and for every
    name that means the same plugin as another of the map (an alias beside the name it
    stands for), a sentence saying so: the caller refuses the map then."""
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    conflicts: list[str] = []
    for name, config in plugins.items():
        canonical = canonical_name(name)
        if canonical in given:
            first = given[canonical]
            conflicts.append(
                f"plugins {first!r} and {name!r} are the same plugin ({canonical}); keep one"
            )
            continue
        given[canonical] = name
        out[canonical] = config
    return out, conflicts


class PluginCheckError(Exception):
    """A plugin configuration the runtime would refuse. ``reason`` is what is wrong, in the
    wording of the seed where it has one (``property "endpoint_addrs" is required``);
    ``pointer`` locates it inside the plugin's configuration."""

    def __init__(self, plugin: str, reason: str, pointer: str = "") -> None:
        self.plugin = plugin
        self.reason = reason
        self.pointer = pointer
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return f"failed to check the configuration of plugin {self.plugin}: {self.reason}"


def check_plugin(name: str, raw: Any) -> tuple[PluginSpec, PluginConfig]:
    """Validate one attachment ``{name: raw}`` exactly as the runtime will."""
    spec = PLUGINS.get(name)
    if spec is None:
        raise PluginCheckError(name, f"unknown plugin {name!r} (plugin names are case-sensitive)")
    if not isinstance(raw, dict):
        raise PluginCheckError(name, "$: object expected")
    if "_meta" in raw and not spec.reorderable:
        raise PluginCheckError(
            name, f'property "_meta" is not allowed: {name} cannot be re-ranked', "/_meta"
        )
    try:
        config = spec.config.model_validate(raw)
    except ValidationError as error:
        first = min(error.errors(), key=lambda e: e["type"] != "missing")
        raise PluginCheckError(name, reason_of(first), json_pointer(first["loc"])) from None
    return spec, config


def reason_of(error: Mapping[str, Any]) -> str:
    """A pydantic error in the runtime's voice: APISIX's ``property "x" is required`` for a
    missing property, a semantic check's own message (``cache_key variable $request_method
    unsupported``), ``$.path: rule`` for the rest."""
    loc = [part for part in error["loc"] if not str(part).startswith("function-")]
    if error["type"] == "missing":
        return f'property "{".".join(str(p) for p in loc)}" is required'
    if error["type"] == "extra_forbidden":
        return f'property "{".".join(str(p) for p in loc)}" is not allowed'
    if error["type"] == "value_error":
        # a plugin's own semantic check: its message says it all, in the seed's words
        return str((error.get("ctx") or {}).get("error") or error["msg"])
    if error["type"] == "portico":
        return str(error["msg"])
    return describe(error, loc)


def effective_order(spec: PluginSpec, config: PluginConfig) -> int:
    return config.meta.order if config.meta is not None else spec.order


def conflicting(names: Iterable[str]) -> tuple[str, str] | None:
    """The first two of ``names`` (a chain's plugins) that cannot run together (a spec's
    ``conflicts``: xml-to-json and json-to-xml would convert each other's output), or None."""
    present = list(dict.fromkeys(names))
    for name in present:
        spec = PLUGINS.get(name)
        if spec is None:
            continue
        for other in spec.conflicts:
            if other in present:
                return name, other
    return None
