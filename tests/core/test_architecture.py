"""The layering of CONVENTIONS.md, checked on the static import graph (every import counts,
including those inside functions and under ``TYPE_CHECKING``)."""

from __future__ import annotations

from tests.support.imports import Import, imports

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
