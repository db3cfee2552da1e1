"""A real, throwaway PostgreSQL cluster for tests, driven through the server's own CLI tools.

Synchronous on purpose so a session-scoped pytest fixture can own it. Tuned for speed, not
durability (fsync off etc.): the data is thrown away at the end.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Self

from .ports import free_port

_ENSURE_HINT = "run `scripts/ensure-system-packages.sh` (as root) to install them"
_REQUIRED = ("initdb", "pg_ctl", "postgres", "psql")
_DB_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# A unix socket path must fit in sockaddr_un.sun_path (108 bytes on Linux) including
# "/sock/.s.PGSQL.NNNNN"; keep the parent well below that.
_MAX_PARENT_LEN = 60
_START_ATTEMPTS = 3


def _has_tools(bindir: Path) -> bool:
    return all(os.access(bindir / tool, os.X_OK) for tool in _REQUIRED)


def _version_key(bindir: Path) -> tuple[int, ...]:
    # /usr/lib/postgresql/<version>/bin; "9.6" and "15" both compare numerically.
    try:
        return tuple(int(part) for part in bindir.parent.name.split("."))
    except ValueError:
        return (-1,)


def find_bindir() -> Path:
    """Locate a directory holding initdb, pg_ctl, postgres and psql."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        proc = subprocess.run(
            [pg_config, "--bindir"], capture_output=True, text=True, check=False, timeout=30
        )
        if proc.returncode == 0 and proc.stdout.strip():
            candidates.append(Path(proc.stdout.strip()))
    # Debian keeps the server tools out of PATH, under a per-version directory.
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version_key, reverse=True)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).parent)
    for bindir in candidates:
        # pg_config can come from libpq-dev alone and point at a dir without server tools.
        if _has_tools(bindir):
            return bindir
    raise RuntimeError(
        f"PostgreSQL server binaries ({', '.join(_REQUIRED)}) not found "
        f"(looked in pg_config --bindir, /usr/lib/postgresql/*/bin, PATH); {_ENSURE_HINT}"
    )


def _others_can_traverse(path: Path) -> bool:
    """True if a different, unprivileged user (postgres) can reach files under `path`."""
    return all(p.stat().st_mode & 0o001 for p in (path, *path.parents))


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


def _check_name(name: str) -> str:
    if not _DB_NAME.match(name):
        raise ValueError(f"invalid database name {name!r} (must match {_DB_NAME.pattern})")
    return name


class PostgresCluster:
    """initdb + pg_ctl a private cluster on a free loopback port; `stop()` deletes it.

    `base_dir` is the parent directory for the cluster's files: a fresh mode-0755 directory is
    created under it on `start()` and removed on `stop()`.
    """

    host = "127.0.0.1"
    user = "postgres"

    def __init__(self, base_dir: Path) -> None:
        self.bindir = find_bindir()
        self.port = 0
        self._parent = Path(base_dir)
        self._root: Path | None = None
        version = self._tool("postgres", "-V").stdout
        match = re.search(r"\)\s*(\d+)", version)
        self.major_version = int(match.group(1)) if match else 0
        # initdb/pg_ctl/postgres refuse to run as root, so as root we act as the postgres user.
        self._as_root = os.geteuid() == 0
        self._pg_user: pwd.struct_passwd | None = None
        if self._as_root:
            try:
                self._pg_user = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError(
                    "running as root, but there is no 'postgres' system user to run the "
                    f"server as; {_ENSURE_HINT}"
                ) from None

    # -- paths -------------------------------------------------------------------------------

    @property
    def base_dir(self) -> Path:
        if self._root is None:
            raise RuntimeError("cluster not started")
        return self._root

    @property
    def data_dir(self) -> Path:
        return self.base_dir / "data"

    @property
    def log_path(self) -> Path:
        return self.base_dir / "log"

    def _make_root(self) -> Path:
        self._parent.mkdir(parents=True, exist_ok=True)
        parent = self._parent.resolve()
        # pytest's tmp dirs live under a 0700 /tmp/pytest-of-root that the postgres user cannot
        # enter, and long paths overflow the unix socket path limit: use the system temp dir then.
        unreachable = self._as_root and not _others_can_traverse(parent)
        if unreachable or len(str(parent)) > _MAX_PARENT_LEN:
            parent = Path(tempfile.gettempdir())
        root = Path(tempfile.mkdtemp(prefix="portico-pg-", dir=parent))
        root.chmod(0o755)  # mkdtemp makes it 0700; postgres must be able to enter it
        (root / "sock").mkdir(mode=0o755)
        if self._pg_user is not None:
            for path in (root, *root.rglob("*")):
                os.chown(path, self._pg_user.pw_uid, self._pg_user.pw_gid)
        return root

    # -- subprocess helpers ------------------------------------------------------------------

    def _tool(
        self, tool: str, *args: str, as_server_user: bool = False, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bindir / tool), *args]
        if as_server_user and self._as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        # cwd: the postgres user may not be allowed into the caller's cwd (e.g. /root), and the
        # tools complain when they cannot resolve it.
        cwd = self._root if self._root is not None else Path(tempfile.gettempdir())
        return subprocess.run(
            cmd, capture_output=True, text=True, check=False, timeout=timeout, cwd=cwd
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        if self._root is not None:
            raise RuntimeError("cluster already started")
        self._root = self._make_root()
        try:
            self._initdb()
            self._pg_ctl_start()
        except BaseException:
            self.stop()
            raise

    def _initdb(self) -> None:
        errors = []
        # C.UTF-8 gives UTF-8 ctype without depending on generated locales; plain C as a fallback
        # for systems whose libc lacks it.
        for locale in ("C.UTF-8", "C"):
            proc = self._tool(
                "initdb",
                *("-D", str(self.data_dir), "-U", "postgres", "-A", "trust", "-E", "UTF8"),
                f"--locale={locale}",
                as_server_user=True,
            )
            if proc.returncode == 0:
                return
            errors.append(f"--locale={locale}: {proc.stdout}{proc.stderr}")
            shutil.rmtree(self.data_dir, ignore_errors=True)
        raise RuntimeError("initdb failed:\n" + "\n".join(errors))

    def _pg_ctl_start(self) -> None:
        for attempt in range(1, _START_ATTEMPTS + 1):
            port = free_port()
            options = [
                *("-p", str(port), "-k", str(self.base_dir / "sock")),
                *("-c", "listen_addresses=127.0.0.1"),
                # Throwaway data: skip durability work, it dominates test DDL time.
                *("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"),
                *("-c", "max_connections=200", "-c", "shared_buffers=64MB"),
            ]
            proc = self._tool(
                "pg_ctl",
                *("-D", str(self.data_dir), "-l", str(self.log_path), "-w", "-t", "60"),
                *("start", "-o", shlex.join(options)),  # pg_ctl hands -o to a shell
                as_server_user=True,
                timeout=90,
            )
            if proc.returncode == 0:
                self.port = port
                return
            log = _tail(self.log_path)
            # Someone took the port between free_port() and the bind: try another one.
            if "already in use" in log and attempt < _START_ATTEMPTS:
                continue
            raise RuntimeError(
                f"pg_ctl start failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}\n"
                f"--- server log tail ({self.log_path}) ---\n{log}"
            )

    def stop(self) -> None:
        """Stop the server (immediate mode: data is discarded anyway) and delete its files."""
        root = self._root
        if root is None:
            return
        pid_file = self.data_dir / "postmaster.pid"
        try:
            if pid_file.exists():
                proc = self._tool(
                    "pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop",
                    as_server_user=True, timeout=60,
                )  # fmt: skip
                if proc.returncode != 0 and pid_file.exists():
                    # Don't leave an orphan postmaster running on a deleted data dir.
                    with contextlib.suppress(ValueError, IndexError, OSError):
                        os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
        finally:
            self._root = None
            self.port = 0
            shutil.rmtree(root, ignore_errors=True)

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

    # -- SQL ---------------------------------------------------------------------------------

    def url(self, database: str, driver: str = "postgresql+asyncpg") -> str:
        return f"{driver}://{self.user}@{self.host}:{self.port}/{database}"

    def execute(self, sql: str, database: str = "postgres") -> None:
        """Run SQL with psql (no Python driver needed); raise RuntimeError with psql's stderr."""
        if not self.port:
            raise RuntimeError("cluster not started")
        proc = self._tool(
            "psql",
            *("-v", "ON_ERROR_STOP=1", "-X", "-q"),
            *("-h", self.host, "-p", str(self.port), "-U", self.user, "-d", database),
            *("-c", sql),
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"psql failed on database {database!r} (exit {proc.returncode}): "
                f"{proc.stderr.strip()}\nSQL: {sql}"
            )

    def create_database(self, name: str, template: str | None = None) -> None:
        sql = f'CREATE DATABASE "{_check_name(name)}"'
        if template is not None:
            sql += f' TEMPLATE "{_check_name(template)}"'
            # FILE_COPY (the pre-15 behaviour) copies the template's files instead of writing
            # every block through WAL (PG15's default WAL_LOG); its two forced checkpoints are
            # cheap with fsync=off. Both take ~50-100 ms per clone for small schemas.
            if self.major_version >= 15:
                sql += " STRATEGY FILE_COPY"
        self.execute(sql)

    def drop_database(self, name: str) -> None:
        # FORCE terminates leftover connections (e.g. a pool a test forgot to dispose).
        self.execute(f'DROP DATABASE IF EXISTS "{_check_name(name)}" WITH (FORCE)')
