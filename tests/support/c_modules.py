"""Both implementations of a C module of the native build, for the tests that compare them.

A C module (``native.C_MODULES``) has a pure-Python reference beside it, ``<module>.py``, which
runs where the native build is not used; its tests run each case on both and compare. Here
the reference is loaded from its source under a name of its own, and the C module from the
current build under its real name (an extension's init function is named after it), and
``sys.modules`` is put back as it was: loading an extension registers it there, and an
interpreted run (``PORTICO_NATIVE=0``) must go on importing the reference.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from portico import native


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference(module: str) -> ModuleType:
    """The Python reference of C module ``module``, loaded apart from the one in use."""
    return _load(native.source_of(module), module.replace(".", "_") + "_reference")


@functools.cache
def compiled(module: str) -> ModuleType | None:
    """The C module of the current native build (the one in use, when it is), else None.
    Loaded at most once a process: a C module of one-phase init loaded again is not
    initialised again; CPython copies the dict it kept of the first load into whatever
    ``sys.modules`` holds under its name, here the reference in use, which would then mix
    both modules' objects."""
    loaded = importlib.import_module(module)
    if native.compiled(loaded):
        return loaded
    directory = native.build_dir()
    if not native.current(directory):
        return None
    package, _, leaf = module.rpartition(".")
    found = list(directory.joinpath(*package.split(".")).glob(f"{leaf}.*.so"))
    if not found:
        return None
    kept = sys.modules.get(module)
    try:
        return _load(found[0], module)
    finally:
        if kept is not None:
            sys.modules[module] = kept


def implementations(module: str) -> tuple[ModuleType, ModuleType | None, list[object]]:
    """``(reference, c_module_or_None, params)``: ``params`` for ``parametrize`` over both
    (ids ``python`` and ``c``; only ``python`` without a current build)."""
    python, c = reference(module), compiled(module)
    params: list[object] = [pytest.param(python, id="python")]
    if c is not None:
        params.append(pytest.param(c, id="c"))
    return python, c, params
