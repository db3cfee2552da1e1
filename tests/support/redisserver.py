"""A real, throwaway redis-server for tests (no persistence, loopback only)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from .ports import free_port

_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 5.0
_START_ATTEMPTS = 3


def _ping(port: int) -> bool:
    # Raw RESP so this module needs no redis client library.
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """Runs `redis-server` in the foreground on a free port; files (log) go to `base_dir`."""

    def __init__(self, base_dir: Path) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError(
                "redis-server not found on PATH; run `scripts/ensure-system-packages.sh` "
                "(as root) to install it"
            )
        self.executable = exe
        self.base_dir = Path(base_dir)
        self.port = 0
        self.log_path = self.base_dir / "redis.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _output(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return "(no output)"

    def start(self) -> None:
        if self._proc is not None:
            raise RuntimeError("redis-server already started")
        self.base_dir.mkdir(parents=True, exist_ok=True)
        for attempt in range(1, _START_ATTEMPTS + 1):
            port = free_port()
            # Output goes to a file, not a pipe nobody drains, so redis can never block on it.
            self._log = self.log_path.open("wb")  # one attempt per log: errors show only it
            self._proc = subprocess.Popen(
                [
                    self.executable,
                    *("--port", str(port), "--bind", "127.0.0.1"),
                    *("--save", "", "--appendonly", "no"),  # throwaway: no persistence
                    *("--dir", str(self.base_dir), "--daemonize", "no"),
                ],
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
            )
            # (a poll with a deadline, as eventually_sync is, written out: a start that fails
            # must stop the process, and may be retried on another port)
            deadline = time.monotonic() + _START_TIMEOUT
            while time.monotonic() < deadline:
                if _ping(port):
                    self.port = port
                    return
                if self._proc.poll() is not None:
                    break
                time.sleep(0.05)
            output = self._output()
            exited = self._proc.poll() is not None
            self.stop()
            # Someone took the port between free_port() and the bind: try another one.
            if exited and "already in use" in output and attempt < _START_ATTEMPTS:
                continue
            state = "exited" if exited else f"did not answer PING within {_START_TIMEOUT:.0f}s"
            raise RuntimeError(f"redis-server on port {port} {state}; output:\n{output}")

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
        self.port = 0

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
