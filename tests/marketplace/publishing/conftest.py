"""Fixtures of the publishing tests: the content tests' catalogue rows and callers."""

from __future__ import annotations

from tests.marketplace.content.conftest import (
    catalogue,
    client_only,
    editor,
    manager,
    test_roles,
)

__all__ = ["catalogue", "client_only", "editor", "manager", "test_roles"]
