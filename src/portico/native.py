"""The gateway's hot modules, compiled with mypyc when a build of them is there.

The data plane spends its time in a few modules (the HTTP engine, routing, the request
pipeline). ``make`` compiles exactly those, unchanged, with mypyc (``scripts/build_native.py``)
into ``build/native/``: measured with callgrind, a proxied request then costs about a third
fewer instructions (see README, Performance). Nothing else changes: the compiled modules are
the same source, type-checked by mypy, and every other module stays interpreted.

The build is used only while it is exactly the source: its manifest records a hash of every
module of the package it comes from, subpackages included (compiled code also relies on the
types of the interpreted modules it calls), and one that no longer matches (a module edited
since ``make``) turns the whole build off, with one warning: the interpreted modules then run.
The compiled modules call each other directly, so it is all of them or none. ``PORTICO_NATIVE=0``
turns it off too (to debug with the interpreted frames).

Packages holding compiled modules put the build's directory first on their ``__path__``
(:func:`package_path`); the group's shared library is a top-level module, found through
``sys.path``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import sys
from pathlib import Path

logger = logging.getLogger("portico.native")

#: the compiled modules: the data plane's hot path, measured
MODULES = (
    "portico.gateway.access_phase",
    "portico.gateway.answer_filters",
    "portico.gateway.context",
    "portico.gateway.environment_runtime",
    "portico.gateway.gateway",
    "portico.gateway.hosts",
    "portico.gateway.plugin_services",
    "portico.gateway.request_ids",
    "portico.gateway.route_keys",
    "portico.gateway.upstream_request",
    "portico.gateway.balancing.algorithms",
    "portico.gateway.balancing.balancer",
    "portico.gateway.balancing.nodes",
    "portico.gateway.counters.local",
    "portico.gateway.health.checker",
    "portico.gateway.health.state",
    "portico.gateway.routing.client_address",
    "portico.gateway.routing.paths",
    "portico.gateway.routing.router",
    "portico.gateway.telemetry.batch",
    "portico.gateway.telemetry.log_entry",
    "portico.gateway.telemetry.rollups",
    "portico.gateway.plugins._ai_chat",
    "portico.gateway.plugins._xml_mapping",
    "portico.gateway.plugins._xml_mediation",
    "portico.gateway.plugins.ai_prompt_guard.runtime",
    "portico.gateway.plugins.ai_prompt_template.runtime",
    "portico.gateway.plugins.ai_proxy.runtime",
    "portico.gateway.plugins.ai_rate_limiting.runtime",
    "portico.gateway.plugins.json_to_xml.runtime",
    "portico.gateway.plugins.key_auth.runtime",
    "portico.gateway.plugins.limit_count.runtime",
    "portico.gateway.plugins.product_quota.runtime",
    "portico.gateway.plugins.trace_export.propagation",
    "portico.gateway.plugins.trace_export.runtime",
    "portico.gateway.plugins.xml_to_json.runtime",
    "portico.gateway.http.body",
    "portico.gateway.http.callback_forward",
    "portico.gateway.http.channel",
    "portico.gateway.http.client_writes",
    "portico.gateway.http.connection",
    "portico.gateway.http.errors",
    "portico.gateway.http.forwarding",
    "portico.gateway.http.held_writes",
    "portico.gateway.http.names",
    "portico.gateway.http.proxy",
    "portico.gateway.http.relaying",
    "portico.gateway.http.request",
    "portico.gateway.http.request_cycle",
    "portico.gateway.http.responder",
    "portico.gateway.http.response_lines",
    "portico.gateway.http.timer",
    "portico.gateway.http.upstream",
    "portico.gateway.http.upstream_conn",
    "portico.gateway.http.upstream_contract",
    "portico.gateway.http.upstream_exchange",
)
#: modules written in C (``<module>.c`` beside the reference ``<module>.py``, which runs when
#: the build is not used, and which their tests compare them with), built with the others
C_MODULES = (
    "portico.gateway.telemetry.jsonline",
    "portico.gateway.plugins.trace_export.wire",
    "portico.gateway.plugins._xml_json",
    "portico.gateway.plugins._json_xml",
)
#: the other sources of a C module, beside its ``.c`` (C++ where the name says so; its
#: directory's ``.h`` and the vendored pugixml are hashed with them)
C_EXTRA_SOURCES: dict[str, tuple[str, ...]] = {
    "portico.gateway.plugins._xml_json": ("_xml_fast.cc",),
}
#: vendored libraries compiled into a C module (their files are part of its source)
C_VENDORED: dict[str, tuple[str, ...]] = {
    "portico.gateway.plugins._xml_json": ("_pugixml",),
}
#: what a C module links besides Python: commands printing its compiler and linker flags
#: (``-I``, ``-L``, ``-l``), the first that runs is used; from the library's Debian -dev
#: package (``scripts/ensure-system-packages.sh`` installs it), which has no pkg-config file
#: dependency: xml2-config when pkg-config is not installed
C_LIBRARIES: dict[str, tuple[tuple[str, ...], ...]] = {
    "portico.gateway.plugins._xml_json": (  # libxml2-dev
        ("pkg-config", "--cflags", "--libs", "libxml-2.0"),
        ("xml2-config", "--cflags", "--libs"),
    ),
}
#: mypyc's name for the library the compiled modules share
GROUP = "portico_native"
MANIFEST = "manifest.json"

_SOURCE_ROOT = Path(__file__).resolve().parent.parent  # the directory holding portico/


def build_dir() -> Path:
    configured = os.environ.get("PORTICO_NATIVE_DIR")
    return Path(configured) if configured else _SOURCE_ROOT.parent / "build" / "native"


def source_of(module: str) -> Path:
    return _SOURCE_ROOT.joinpath(*module.split(".")).with_suffix(".py")


def c_source_of(module: str) -> Path:
    return _SOURCE_ROOT.joinpath(*module.split(".")).with_suffix(".c")


def sources() -> list[Path]:
    """What a build depends on: every module of the packages holding compiled ones, their
    subpackages included, and the C sources with the headers beside them (the Makefile's
    NATIVE_SOURCES are the same files)."""
    packages = {source_of(module).parent for module in (*MODULES, *C_MODULES)}
    outermost = {p for p in packages if not any(parent in packages for parent in p.parents)}
    found = {path for package in outermost for path in package.rglob("*.py")}
    headers = {path for module in C_MODULES for path in c_source_of(module).parent.glob("*.h")}
    extra = {path for module in C_MODULES for path in extra_sources_of(module)}
    vendored = {
        path
        for module, directories in C_VENDORED.items()
        for directory in directories
        for path in c_source_of(module).parent.joinpath(directory).iterdir()
        if path.is_file()
    }
    return sorted(found | headers | extra | vendored | {c_source_of(m) for m in C_MODULES})


def extra_sources_of(module: str) -> list[Path]:
    """A C module's sources beside its ``.c`` (``C_EXTRA_SOURCES``)."""
    directory = c_source_of(module).parent
    return [directory / name for name in C_EXTRA_SOURCES.get(module, ())]


def manifest() -> dict[str, object]:
    """What a build records: the interpreter it is for, what it compiled, and each source's
    hash."""
    return {
        "cache_tag": sys.implementation.cache_tag,
        "modules": list(MODULES),
        "c_modules": list(C_MODULES),
        "sources": {
            str(path.relative_to(_SOURCE_ROOT)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sources()
        },
    }


def current(directory: Path) -> bool:
    """Whether ``directory`` holds a build of exactly the current source, for this Python."""
    try:
        built = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return False  # never built (or half-built): the interpreted modules, quietly
    try:
        expected = manifest()
    except OSError:
        return False  # a source file missing: not a layout this build belongs to
    if built != expected:
        logger.warning(
            "the compiled gateway modules in %s are not the current source (edited since "
            "they were built?): running the interpreted ones; `make native` rebuilds them",
            directory,
        )
        return False
    return True


@functools.cache
def active() -> bool:
    """Whether the compiled modules are used in this process (decided once)."""
    if os.environ.get("PORTICO_NATIVE", "1") == "0":
        return False
    directory = build_dir()
    if not current(directory):
        return False
    sys.path.append(str(directory))  # the group's shared library is a top-level module
    return True


def package_path(package: str, path: list[str]) -> list[str]:
    """``path`` (a package's ``__path__``) with the build's directory for that package first,
    when the compiled modules are used."""
    if not active():
        return path
    return [str(build_dir().joinpath(*package.split("."))), *path]


def compiled(module: object) -> bool:
    """Whether ``module`` was loaded from the compiled build."""
    return str(getattr(module, "__file__", "")).endswith((".so", ".pyd"))
