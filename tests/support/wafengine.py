"""Portico's real WAF engine (``portico waf-engine``: libmodsecurity3 + the OWASP Core Rule
Set from Debian's packages) as a throwaway process on loopback."""

from __future__ import annotations

import os
import sys
import urllib.request
from pathlib import Path

from .process import ServerProcess

_SRC = Path(__file__).resolve().parents[2] / "src"


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=0.5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


class WafEngine(ServerProcess):
    """Runs ``python -m portico.cli waf-engine`` on a free port; output goes to ``base_dir``."""

    name = "the WAF engine"
    start_timeout = 30.0  # the Core Rule Set takes a moment to parse on a loaded machine

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = Path(base_dir)
        paths = [str(_SRC), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        super().__init__(self.base_dir / "waf-engine.log", env=env)

    def command(self) -> list[str]:
        return [sys.executable, "-m", "portico.cli", "waf-engine", "--port", str(self.port)]

    def is_ready(self) -> bool:
        return _healthy(self.port)
