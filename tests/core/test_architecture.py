"""Where queries are written (CONVENTIONS.md), checked on the sources. What imports what is
checked by the import-linter contracts of pyproject.toml (``make lint``;
tests/core/test_lint_config.py)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

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
