"""The compiled build of the gateway's hot modules (portico/native.py): used when it is the
current source, never when it is not.

``make test`` builds it first and sets ``PORTICO_REQUIRE_NATIVE=1``: the suite then runs on
the compiled modules, and this file checks that it really does. It also runs the gateway's
tests once more with ``PORTICO_NATIVE=0``, on the interpreted ones.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
from pathlib import Path

import pytest

from portico import native


def test_the_suite_runs_on_what_the_environment_asks_for() -> None:
    # (the C modules too: a build left one out where its library's -dev package was missing)
    modules = [importlib.import_module(name) for name in (*native.MODULES, *native.C_MODULES)]
    if os.environ.get("PORTICO_NATIVE") == "0":
        assert not native.active()
        assert not [m.__name__ for m in modules if native.compiled(m)]
    elif os.environ.get("PORTICO_REQUIRE_NATIVE") == "1":
        assert native.active(), f"no current build in {native.build_dir()}: make native"
        assert all(native.compiled(m) for m in modules), [
            m.__name__ for m in modules if not native.compiled(m)
        ]
    else:
        pytest.skip("neither PORTICO_NATIVE=0 nor PORTICO_REQUIRE_NATIVE=1: either may load")


def test_a_build_is_current_only_with_every_module_s_source_unchanged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert not native.current(tmp_path)  # never built
    (tmp_path / native.MANIFEST).write_text("{not json")
    assert not native.current(tmp_path)  # half-written
    recorded = native.manifest()
    (tmp_path / native.MANIFEST).write_text(json.dumps(recorded))
    assert native.current(tmp_path)
    # Only this module's records: a server another test left running in a thread of this
    # worker may log (asyncio's "socket.send() raised exception") while this test runs.
    assert not [r for r in caplog.records if r.name == "portico.native"]

    for edited in ("portico/gateway/http/connection.py", "portico/gateway/environment_runtime.py"):
        hashes = dict(json.loads(json.dumps(recorded))["sources"])
        hashes[edited] = "0" * 64  # a compiled module, or one it calls, edited since the build
        (tmp_path / native.MANIFEST).write_text(json.dumps({**recorded, "sources": hashes}))
        with caplog.at_level(logging.WARNING, logger="portico.native"):
            assert not native.current(tmp_path)
        assert "not the current source" in caplog.text

    other = {**recorded, "cache_tag": "cpython-0"}  # built for another interpreter
    (tmp_path / native.MANIFEST).write_text(json.dumps(other))
    assert not native.current(tmp_path)


def test_every_compiled_module_has_its_source_among_the_build_s_sources() -> None:
    for name in native.MODULES:
        assert native.source_of(name) in native.sources(), name


def test_a_c_module_s_other_sources_and_vendored_library_are_among_them() -> None:
    # xml-to-json's C module is C and C++, and compiles the vendored pugixml into itself: an
    # edit to any of them is an edit to the module (the Makefile's NATIVE_SOURCES finds the
    # same files)
    sources = set(native.sources())
    module = "portico.gateway.plugins._xml_json"
    directory = native.c_source_of(module).parent
    assert directory / "_xml_fast.cc" in native.extra_sources_of(module)
    for path in ("_xml_fast.cc", "_xml_fast.h", "_pugixml/pugixml.cpp", "_pugixml/pugixml.hpp"):
        assert directory / path in sources, path
