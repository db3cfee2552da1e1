"""The import-linter contracts of pyproject.toml (``make lint`` runs ``lint-imports``) catch
what they are for: the real tree passes, and a copy of it with one violation written in fails,
naming the contract and the import. Each contract is looked up by its id, so deleting one (or
renaming it away) fails its test here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _contracts() -> dict[str, str]:
    """Contract id → name, as pyproject.toml declares them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {c["id"]: c["name"] for c in config["tool"]["importlinter"]["contracts"]}


def _lint(project: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the tree under ``project/src``, with ``project``'s configuration."""
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "COLUMNS": "300", "NO_COLOR": "1"}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A throwaway copy of the project's sources and configuration (the real contracts)."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(
        ROOT / "src" / "portico",
        tmp_path / "src" / "portico",
        ignore=shutil.ignore_patterns("__pycache__", "*.so"),
    )
    return tmp_path


def _write(project: Path, module: str, source: str) -> None:
    """Append ``source`` to ``module`` of the copy (creating it if it is new)."""
    path = project / "src" / Path(*module.split(".")).with_suffix(".py")
    if not path.exists() and (path.with_suffix("") / "__init__.py").exists():
        path = path.with_suffix("") / "__init__.py"
    with path.open("a") as file:
        file.write(f"\n{source}\n")


def _broken(result: subprocess.CompletedProcess[str]) -> set[str]:
    """The names of the contracts the report says are broken."""
    found = set()
    for line in result.stdout.splitlines():
        name, broken, _ = line.partition(" BROKEN")
        if broken:
            found.add(name.strip())
    return found


def test_the_contracts_are_the_documented_ones() -> None:
    assert sorted(_contracts()) == sorted(
        [
            "kernel",
            "gateway",
            "waf-engine",
            "admin-surfaces",
            "portal-below-admin",
            "portal",
            "acyclic",
        ]
    )


def test_the_real_tree_keeps_every_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(_contracts())} kept, 0 broken." in result.stdout


def test_an_untouched_copy_keeps_every_contract(copy: Path) -> None:
    result = _lint(copy)
    assert result.returncode == 0, result.stdout + result.stderr


# (contract id, module of the copy, the line written into it, what the report must name)
VIOLATIONS = [
    pytest.param(
        "kernel",
        "portico.core.clock",
        "from portico.gateway import snapshot",
        "portico.core.clock -> portico.gateway.snapshot",
        id="kernel-imports-the-gateway",
    ),
    pytest.param(
        "kernel",
        "portico.core.tokens",
        "from portico import metadata",
        "portico.core.tokens -> portico.metadata",
        id="kernel-imports-a-wiring-module",
    ),
    pytest.param(
        "gateway",
        "portico.gateway.http.timer",
        "import sqlalchemy",
        "portico.gateway.http.timer -> sqlalchemy",
        id="gateway-imports-sqlalchemy",
    ),
    pytest.param(
        "gateway",
        "portico.gateway.snapshot",
        "import fastapi",
        "portico.gateway.snapshot -> fastapi",
        id="gateway-imports-fastapi",
    ),
    pytest.param(
        "gateway",
        "portico.gateway.sync",
        "from portico.management.environment import models",
        "portico.gateway.sync -> portico.management.environment.models",
        id="gateway-imports-management",
    ),
    pytest.param(
        "waf-engine",
        "portico.waf.engine",
        "from portico.gateway import snapshot",
        "portico.waf.engine -> portico.gateway.snapshot",
        id="waf-engine-imports-the-gateway",
    ),
    pytest.param(
        "admin-surfaces",
        "portico.management.api.service",
        "from portico.marketplace import permissions",
        "portico.management.api.service -> portico.marketplace.permissions",
        id="management-imports-marketplace",
    ),
    pytest.param(
        "admin-surfaces",
        "portico.marketplace.user.service",
        "from portico.management.org import repository",
        "portico.marketplace.user.service -> portico.management.org.repository",
        id="marketplace-imports-management",
    ),
    pytest.param(
        "portal-below-admin",
        "portico.marketplace.user.service",
        "from portico.portal import jwks",
        "portico.marketplace.user.service -> portico.portal.jwks",
        id="marketplace-imports-the-portal",
    ),
    pytest.param(
        "portal",
        "portico.portal.jwks",
        "from portico.marketplace.user import repository",
        "portico.portal.jwks -> portico.marketplace.user.repository",
        id="portal-bypasses-public",
    ),
]


@pytest.mark.parametrize(("contract", "module", "line", "named"), VIOLATIONS)
def test_a_layering_violation_is_reported(
    copy: Path, contract: str, module: str, line: str, named: str
) -> None:
    name = _contracts()[contract]
    _write(copy, module, line)
    result = _lint(copy)
    assert result.returncode != 0
    assert name in _broken(result), result.stdout
    assert named in result.stdout


CIRCLES = [
    pytest.param(
        {
            "portico.core.circle_a": "from portico.core import circle_b",
            "portico.core.circle_b": "from portico.core import circle_a",
        },
        "No cycles are allowed in portico.core.",
        id="two-modules-of-the-kernel",
    ),
    pytest.param(
        {
            "portico.gateway.routing.paths": "from portico.gateway.http import names",
            "portico.gateway.http.names": "from portico.gateway.routing import router",
        },
        "No cycles are allowed in portico.gateway.",
        id="two-packages-of-the-gateway",
    ),
    pytest.param(
        {
            # upstream.service imports environment.models; an import inside a function
            # counts as any other (it runs, only later)
            "portico.management.environment.models": (
                "def _late() -> None:\n    from portico.management.upstream import service"
            ),
        },
        "No cycles are allowed in portico.management.",
        id="lazy-import-between-management-domains",
    ),
]


@pytest.mark.parametrize(("written", "named"), CIRCLES)
def test_an_import_circle_is_reported(copy: Path, written: dict[str, str], named: str) -> None:
    for module, source in written.items():
        _write(copy, module, source)
    result = _lint(copy)
    assert result.returncode != 0
    assert _contracts()["acyclic"] in _broken(result), result.stdout
    assert named in result.stdout
