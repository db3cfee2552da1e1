"""Compile the gateway's hot modules (``portico.native.MODULES``) with mypyc into
``build/native/``, and record what was compiled (``manifest.json``): see portico/native.py.

    .venv/bin/python scripts/build_native.py        (``make native`` runs it when needed)

The manifest is written last: a build that failed midway is never used.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from portico import native  # noqa: E402  (from this checkout, whatever is installed)


def main() -> None:
    from mypyc.build import mypycify  # the dev dependency mypy ships it
    from setuptools import Distribution, Extension

    started = time.monotonic()
    target = native.build_dir()
    temp = target.parent / "native-temp"
    shutil.rmtree(target, ignore_errors=True)
    os.chdir(ROOT)  # mypy reads pyproject.toml's [tool.mypy] from here
    sources = [str(native.source_of(m).relative_to(ROOT)) for m in native.MODULES]
    extensions = mypycify(
        sources, opt_level="3", group_name=native.GROUP, target_dir=str(temp / "c")
    )
    built = 0
    for module in native.C_MODULES:
        flags = _library_flags(module)
        if flags is None:
            continue  # (its reference runs: see _library_flags)
        built += 1
        extensions.append(
            Extension(
                module,
                sources=[
                    str(path.relative_to(ROOT))
                    for path in (native.c_source_of(module), *native.extra_sources_of(module))
                ],
                extra_compile_args=["-O2", "-Wall", "-Werror"],
                **flags,
            )
        )
    distribution = Distribution({"name": "portico-native", "ext_modules": extensions})
    build = distribution.get_command_obj("build_ext")
    build.build_lib = str(target)  # type: ignore[attr-defined]
    build.build_temp = str(temp)  # type: ignore[attr-defined]
    build.parallel = os.cpu_count() or 1  # type: ignore[attr-defined]
    distribution.run_command("build_ext")
    shutil.rmtree(temp, ignore_errors=True)
    (target / native.MANIFEST).write_text(json.dumps(native.manifest(), indent=1))
    count = len(sources) + built
    print(f"build_native: {count} modules in {target} ({time.monotonic() - started:.0f} s)")


def _library_flags(module: str) -> dict[str, list[str]] | None:
    """The include and library directories and libraries a C module is built with: what the
    first of its commands that runs prints (``native.C_LIBRARIES``). None, with a warning,
    when none runs (the library's -dev package is missing): the module is left out of the
    build and its Python reference runs in its place, so that ``make run`` still works on a
    machine without it (``make test`` installs it first, and its tests require the C)."""
    flags: dict[str, list[str]] = {"include_dirs": [], "library_dirs": [], "libraries": []}
    commands = native.C_LIBRARIES.get(module, ())
    if not commands:
        return flags
    printed = None
    for command in commands:
        try:
            printed = subprocess.run(command, check=True, capture_output=True, text=True).stdout  # noqa: S603 (our own fixed commands)
            break
        except (OSError, subprocess.CalledProcessError):
            continue
    if printed is None:
        tried = " or ".join(f"`{' '.join(command)}`" for command in commands)
        print(
            f"build_native: warning: {module} left out (it needs {tried}: install the "
            "library's -dev package, `make system-packages`); its Python reference runs",
            file=sys.stderr,
        )
        return None
    kinds = {"-I": "include_dirs", "-L": "library_dirs", "-l": "libraries"}
    for flag in shlex.split(printed):
        kind = kinds.get(flag[:2])
        if kind is not None:
            flags[kind].append(flag[2:])
    return flags


if __name__ == "__main__":
    main()
