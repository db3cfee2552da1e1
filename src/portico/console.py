"""The web console's pages under /console/ on the management port (``web/console``, served as
``web_pages.py`` serves every front end)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI

from portico.web_pages import NotBuilt, WebPages, mount_pages


class ConsoleNotBuilt(NotBuilt, front_end="web console", app="console"):
    """/console/ asked for while web/console is not built (``console-not-built``)."""


CONSOLE = WebPages(
    prefix="/console",
    not_built=ConsoleNotBuilt,
    # 'unsafe-eval' because the plugin forms' JSON Schema validator (Ajv) compiles each
    # schema, which arrives at run time, into a function
    script_src="'self' 'unsafe-eval'",
)


def mount_console(app: FastAPI, directory: Path) -> None:
    """/console/assets/* from ``directory``'s assets, any other /console/ path its index."""
    mount_pages(app, CONSOLE, directory)
