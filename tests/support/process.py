"""A server under test run as a child process: started on free loopback ports, ready when
its own check says so, its output in a log file, stopped with terminate (then kill).

A fixture subclasses :class:`ServerProcess` and says only how to run its server and how to
tell that it answers (see redisserver, wafengine, ldapserver, opaserver)."""

from __future__ import annotations

import abc
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, ClassVar, Self

from .ports import free_port

_STOP_TIMEOUT = 5.0
_LOG_TAIL = 4000  # characters of output an error shows


class ServerProcess(abc.ABC):
    """Runs ``command()`` from ``start()`` until ``stop()``, on the ``ports`` given, or else
    on free ones picked by ``start()``; these stay the server's, so that ``stop()`` then
    ``start()`` serves on the same ports again. Usable as a context (``start`` ... ``stop``).
    """

    #: what the server is called in errors
    name: ClassVar[str]
    #: how many ports it listens on (``ports``; the first is ``port``)
    listeners: ClassVar[int] = 1
    #: how long ``start()`` waits for ``is_ready()``
    start_timeout: ClassVar[float] = 10.0
    #: how many times ``start()`` tries free ports: another program can take one between
    #: ``free_port()`` and the server's bind
    start_attempts: ClassVar[int] = 3
    #: what the server writes when a port it was given is taken; None for a server that
    #: says nothing then: any early exit then counts as one
    bind_failure: ClassVar[str | None] = "already in use"
    #: whether the log keeps the output of earlier starts; otherwise each start (and each
    #: attempt) writes it afresh, and a failure shows only its own output
    append_log: ClassVar[bool] = False

    def __init__(
        self,
        log_path: Path,
        ports: tuple[int, ...] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.log_path = Path(log_path)
        self.ports = ports
        self.env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        #: the exit status of the process the last ``stop()`` ended (negative: the signal that
        #: ended it, -9 when it had to be killed); None before
        self.returncode: int | None = None

    @abc.abstractmethod
    def command(self) -> Sequence[str]:
        """The command line serving on ``ports``."""

    @abc.abstractmethod
    def is_ready(self) -> bool:
        """Whether the server answers on ``ports`` yet."""

    @property
    def port(self) -> int:
        """The (first) port it serves on; 0 before a start picked one."""
        return self.ports[0] if self.ports else 0

    def start(self) -> None:
        if self._proc is not None:
            raise RuntimeError(f"{self.name} is already started")
        picked = self.ports is None  # new ports: another try may take others
        attempts = self.start_attempts if picked else 1
        for attempt in range(1, attempts + 1):
            if picked:
                self.ports = tuple(free_port() for _ in range(self.listeners))
            exited = self._run_until_ready()
            if exited is None:
                return
            ports, output = self.ports, self.output()
            if picked:
                self.ports = None
            if exited and attempt < attempts and self._port_taken(output):
                continue
            state = "exited" if exited else f"was not ready within {self.start_timeout:.0f}s"
            where = "/".join(map(str, ports or ()))
            raise RuntimeError(f"{self.name} on port {where} {state}; output:\n{output}")

    def _run_until_ready(self) -> bool | None:
        """None once the server is ready; otherwise, with the process stopped, whether it
        had exited (rather than not being ready in time)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        # Output goes to a file, not a pipe nobody drains, so the server never blocks on it.
        self._log = self.log_path.open("ab" if self.append_log else "wb")
        self._proc = subprocess.Popen(
            list(self.command()),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self.env,
        )
        # (a poll with a deadline, as eventually_sync is, written out: a start that fails
        # must stop the process, and may be retried on other ports)
        deadline = time.monotonic() + self.start_timeout
        try:
            while time.monotonic() < deadline:
                if self.is_ready():
                    return None
                if self._proc.poll() is not None:
                    break
                time.sleep(0.05)
        except BaseException:  # interrupted (Ctrl-C) while waiting: the process goes too
            self.stop()
            raise
        exited = self._proc.poll() is not None
        self.stop()
        return exited

    def _port_taken(self, output: str) -> bool:
        return self.bind_failure is None or self.bind_failure in output

    def output(self) -> str:
        """The end of what the server wrote."""
        try:
            return self.log_path.read_text(errors="replace")[-_LOG_TAIL:]
        except OSError:
            return "(no output)"

    def stop(self) -> None:
        """Stops the server if it runs (terminate, then kill if it lingers); idempotent."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc is not None:
            self.returncode = proc.returncode
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
