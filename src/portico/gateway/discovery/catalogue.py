"""Every discovery source this gateway has: the modules of ``sources/``, found rather than
listed, so that a new source is one new module. The management service checks an upstream's
``discovery`` here (:func:`check_discovery`), so that what it stores is what the gateways
can resolve."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from types import MappingProxyType

from portico.gateway.discovery import sources as sources_package
from portico.gateway.discovery.base import DiscoveryContext, Source, SourceSpec

__all__ = ["SOURCES", "UnknownDiscoveryType", "check_discovery", "make_source"]


def _collect() -> Mapping[str, SourceSpec]:
    specs: dict[str, SourceSpec] = {}
    names = sorted(
        info.name
        for info in pkgutil.iter_modules(sources_package.__path__)
        if not info.name.startswith("_")
    )
    for name in names:
        spec: SourceSpec = importlib.import_module(f"{sources_package.__name__}.{name}").SOURCE
        if spec.type in specs:
            raise RuntimeError(f"two discovery sources of type {spec.type!r}")
        specs[spec.type] = spec
    return MappingProxyType(specs)


#: discovery ``type`` → its source module's spec
SOURCES: Mapping[str, SourceSpec] = _collect()


class UnknownDiscoveryType(ValueError):
    """A ``discovery.type`` no source module provides."""

    def __init__(self, kind: str) -> None:
        known = ", ".join(repr(name) for name in SOURCES)
        super().__init__(f"must be one of {known}")
        self.kind = kind


def check_discovery(kind: str, service_name: str) -> str:
    """``service_name`` as stored for a source of ``kind``. :class:`UnknownDiscoveryType` for
    an unknown kind; ``ValueError`` with the source's wording for a name it cannot read."""
    spec = SOURCES.get(kind)
    if spec is None:
        raise UnknownDiscoveryType(kind)
    return spec.check(service_name)


def make_source(kind: str, service_name: str, context: DiscoveryContext) -> Source:
    """The source of one upstream (``kind`` and ``service_name`` already checked)."""
    spec = SOURCES.get(kind)
    if spec is None:
        raise UnknownDiscoveryType(kind)
    return spec.source(service_name, context)
