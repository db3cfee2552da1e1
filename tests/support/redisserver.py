"""A real, throwaway redis-server for tests (no persistence, loopback only)."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

from .process import ServerProcess


def _ping(port: int) -> bool:
    # Raw RESP so this module needs no redis client library.
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer(ServerProcess):
    """Runs `redis-server` in the foreground on a free port; files (log) go to `base_dir`."""

    name = "redis-server"

    def __init__(self, base_dir: Path) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError(
                "redis-server not found on PATH; run `scripts/ensure-system-packages.sh` "
                "(as root) to install it"
            )
        self.executable = exe
        self.base_dir = Path(base_dir)
        super().__init__(self.base_dir / "redis.log")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        return [
            self.executable,
            *("--port", str(self.port), "--bind", "127.0.0.1"),
            *("--save", "", "--appendonly", "no"),  # throwaway: no persistence
            *("--dir", str(self.base_dir), "--daemonize", "no"),
        ]

    def is_ready(self) -> bool:
        return _ping(self.port)
