"""Portico's real WAF engine (``portico waf-engine``: libmodsecurity3 + the OWASP Core Rule
Set from Debian's packages) as a throwaway process on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from .ports import free_port

_START_TIMEOUT = 30.0  # the Core Rule Set takes a moment to parse on a loaded machine
_STOP_TIMEOUT = 5.0
_START_ATTEMPTS = 3
_SRC = Path(__file__).resolve().parents[2] / "src"


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=0.5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


class WafEngine:
    """Runs ``python -m portico.cli waf-engine`` on a free port; output goes to ``base_dir``."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = Path(base_dir)
        self.port = 0
        self.log_path = self.base_dir / "waf-engine.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def _output(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return "(no output)"

    def start(self) -> None:
        if self._proc is not None:
            raise RuntimeError("the WAF engine is already started")
        self.base_dir.mkdir(parents=True, exist_ok=True)
        paths = [str(_SRC), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        for attempt in range(1, _START_ATTEMPTS + 1):
            port = free_port()
            self._log = self.log_path.open("wb")
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "portico.cli", "waf-engine", "--port", str(port)],
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env=env,
            )
            deadline = time.monotonic() + _START_TIMEOUT
            while time.monotonic() < deadline:
                if _healthy(port):
                    self.port = port
                    return
                if self._proc.poll() is not None:
                    break
                time.sleep(0.05)
            output = self._output()
            exited = self._proc.poll() is not None
            self.stop()
            if exited and "already in use" in output and attempt < _START_ATTEMPTS:
                continue
            state = "exited" if exited else f"was not healthy within {_START_TIMEOUT:.0f}s"
            raise RuntimeError(f"the WAF engine on port {port} {state}; output:\n{output}")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
