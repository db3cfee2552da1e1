"""The static import graph of ``portico``, read from the sources with :mod:`ast`.

Every import counts, wherever it is written (module level, inside a function, under
``TYPE_CHECKING``): a dependency is a dependency whether or not it runs at import time.
``from a import b`` is an import of ``a.b`` when ``a.b`` is a module, of ``a`` otherwise.
Run as a script (``python -m tests.support.imports``) it prints the cycles between the
packages of ``portico.management``.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int


def modules(src: Path = SRC) -> dict[str, Path]:
    """Dotted module name → file, for every module under ``src``."""
    found = {}
    for path in src.rglob("*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _targets(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                yield (candidate if candidate in known else module), node.lineno


def imports(prefix: str = "portico", src: Path = SRC) -> list[Import]:
    """Every import of a module of ``portico`` by a module of ``prefix``."""
    known = modules(src)
    found = []
    for name, path in sorted(known.items()):
        if not (name == prefix or name.startswith(prefix + ".")):
            continue
        for target, line in _targets(name, path, known):
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and target.split(".")[0] == "portico":
                found.append(Import(name, target, line))
    return found


def package_of(module: str, parent: str, packages: set[str]) -> str | None:
    """The child package of ``parent`` that ``module`` is in, if any."""
    if not module.startswith(parent + "."):
        return None
    child = f"{parent}.{module[len(parent) + 1 :].split('.')[0]}"
    return child if child in packages else None


def package_graph(parent: str, src: Path = SRC) -> dict[tuple[str, str], list[Import]]:
    """(importer package, imported package) → the imports between them, for the child
    packages of ``parent`` (its plain modules are not nodes)."""
    known = modules(src)
    packages = {n for n, p in known.items() if p.name == "__init__.py"}
    edges: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for found in imports(parent, src):
        a = package_of(found.importer, parent, packages)
        b = package_of(found.imported, parent, packages)
        if a and b and a != b:
            edges[(a, b)].append(found)
    return dict(edges)


def cycles(edges: dict[tuple[str, str], list[Import]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), sorted."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(graph) | {b for _, b in edges}):
        if node not in index:
            visit(node)
    return sorted(found)


def main() -> None:
    parent = sys.argv[1] if len(sys.argv) > 1 else "portico.management"
    edges = package_graph(parent)
    found = cycles(edges)
    print(f"{len(found)} cycle(s) between the packages of {parent}")
    for component in found:
        print("-", ", ".join(name.rpartition(".")[2] for name in component))
        for (a, b), why in sorted(edges.items()):
            if a in component and b in component:
                shown = sorted({f"{i.importer}:{i.line} -> {i.imported}" for i in why})
                print(f"    {a.rpartition('.')[2]} -> {b.rpartition('.')[2]}: {shown[0]}", end="")
                print(f" (+{len(shown) - 1})" if len(shown) > 1 else "")


if __name__ == "__main__":
    main()
