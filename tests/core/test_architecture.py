"""The layering of CONVENTIONS.md, checked on the sources: the static import graph (every
import counts, including those inside functions and under ``TYPE_CHECKING``) and where
queries are written."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.imports import SRC, Import, cycles, imports, package_graph

PARTS = ("management", "gateway", "marketplace", "portal")


def _part(module: str) -> str:
    names = module.split(".")
    return names[1] if len(names) > 1 else ""


def _shown(found: list[Import]) -> list[str]:
    return [f"{i.importer}:{i.line} imports {i.imported}" for i in found]


def test_the_kernel_imports_no_part() -> None:
    found = [i for i in imports("portico.core") if _part(i.imported) != "core"]
    assert _shown(found) == []


def test_the_gateway_runtime_imports_only_the_kernel() -> None:
    allowed = {"gateway", "core", "native", ""}  # "": the package itself (its version)
    found = [i for i in imports("portico.gateway") if _part(i.imported) not in allowed]
    assert _shown(found) == []


def test_the_portal_reaches_the_marketplace_only_through_its_public_interface() -> None:
    found = [
        i
        for i in imports("portico.portal")
        if _part(i.imported) == "marketplace" and i.imported != "portico.marketplace.public"
    ]
    assert _shown(found) == []
    assert any(i.imported == "portico.marketplace.public" for i in imports("portico.portal"))


def test_the_admin_surfaces_do_not_import_each_other() -> None:
    found = [
        i
        for i in imports("portico.management") + imports("portico.marketplace")
        if {_part(i.importer), _part(i.imported)} == {"management", "marketplace"}
        or _part(i.imported) == "portal"
    ]
    assert _shown(found) == []


def test_no_import_cycle_between_the_management_domains() -> None:
    assert cycles(package_graph("portico.management")) == []


#: what builds or runs a query: only a repository (or a model's definition) may use them
QUERY_BUILDERS = frozenset(
    {"select", "insert", "update", "delete", "exists", "func", "text", "union", "union_all"}
)
SESSION_QUERIES = frozenset({"execute", "scalar", "scalars", "get", "stream", "stream_scalars"})


def _queries(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
            found += [f"imports {a.name}" for a in node.names if a.name in QUERY_BUILDERS]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SESSION_QUERIES
            and ast.unparse(node.func.value).rpartition(".")[2] == "session"
        ):
            found.append(f"calls {ast.unparse(node.func)}")
    return [f"{path.relative_to(SRC)}:{what}" for what in found]


def test_queries_are_written_in_repositories_only() -> None:
    found = []
    for part in ("management", "marketplace", "portal"):
        for path in sorted((SRC / "portico" / part).rglob("*.py")):
            if path.name not in ("repository.py", "models.py"):
                found += _queries(path)
    assert found == []
