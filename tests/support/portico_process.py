"""Start a ``portico`` command (``serve``, ``gateway``) as its own process on ports picked for
it, and wait until it answers.

``free_port()`` checks a port a moment before the process binds it; something else may take
it in between. Such a start fails with "address already in use" in the process's log, and is
retried on other ports instead of failing the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

from .ports import free_port
from .waiting import eventually_sync

PORTICO = str(Path(sys.executable).with_name("portico"))
#: the addresses `portico serve` listens on: management, gateway, status/metrics
SERVE_LISTENERS = ("PORTICO_LISTEN", "PORTICO_GATEWAY_LISTEN", "PORTICO_METRICS_LISTEN")
#: a port another process took between free_port() and the bind, as the log says it
_PORT_TAKEN = "address already in use"


class PorticoExited(AssertionError):
    """The process ended while the test waited on it."""


def wait_for(
    condition: Callable[[], object],
    process: subprocess.Popen[bytes] | None = None,
    timeout: float = 30.0,
) -> None:
    """Poll ``condition`` until true (transport errors count as not yet); fail at once if
    ``process`` exits meanwhile."""

    def reached() -> object:
        if process is not None and process.poll() is not None:
            raise PorticoExited("portico exited")
        return condition()

    eventually_sync(
        reached,
        timeout,
        interval=0.05,
        ignoring=(httpx.TransportError,),
        what=f"condition not reached in time: {getattr(condition, '__qualname__', condition)}",
    )


def _answers(url: str) -> Callable[[], bool]:
    def answers() -> bool:
        return httpx.get(url, timeout=1).status_code == 200

    answers.__qualname__ = f"{url} answers 200"
    return answers


def start_portico(
    args: Sequence[str],
    env: dict[str, str],
    log_path: Path,
    *,
    listen_on: Sequence[str],
    ready: Callable[[dict[str, str]], str],
    timeout: float,
    attempts: int = 4,
) -> subprocess.Popen[bytes]:
    """Run ``portico *args`` with each variable of ``listen_on`` set to a free loopback
    address in ``env`` (updated in place), until ``ready(env)`` (a URL) answers 200.

    The process's output is appended to ``log_path``; the caller stops the process.
    """
    for attempt in range(1, attempts + 1):
        env.update({name: f"127.0.0.1:{free_port()}" for name in listen_on})
        logged_before = log_path.stat().st_size if log_path.exists() else 0
        with log_path.open("a") as log:
            process = subprocess.Popen([PORTICO, *args], env=env, stdout=log, stderr=log)
        try:
            wait_for(_answers(ready(env)), process, timeout)
        except PorticoExited as exited:
            process.wait(timeout=15)
            output = log_path.read_bytes()[logged_before:].decode(errors="replace")
            if attempt < attempts and _PORT_TAKEN in output.lower():
                continue
            message = f"portico {' '.join(args)} exited:\n{log_path.read_text()}"
            raise PorticoExited(message) from exited
        except BaseException:
            process.terminate()
            process.wait(timeout=15)
            raise
        return process
    raise AssertionError("unreachable: the last attempt returns or raises")


def start_serve(
    env: dict[str, str], log_path: Path, *options: str, timeout: float
) -> subprocess.Popen[bytes]:
    """``portico serve *options`` on picked ports (``env`` gets them), once /healthz
    answers."""
    return start_portico(
        ["serve", *options],
        env,
        log_path,
        listen_on=SERVE_LISTENERS,
        ready=lambda env: f"http://{env['PORTICO_LISTEN']}/healthz",
        timeout=timeout,
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
    process.wait(timeout=15)


#: the administrator ``bootstrapped_serve`` creates
OWNER = "owner@example.com"
OWNER_PASSWORD = "owner-password-123"
#: how long a ``portico serve`` may take to answer (migrations, a busy CI machine)
STARTUP = 90.0


@contextmanager
def bootstrapped_serve(
    database_url: str, tmp_path: Path, **settings: str
) -> Iterator[tuple[dict[str, str], subprocess.Popen[bytes]]]:
    """``portico bootstrap`` (the ``OWNER`` administrator) then ``portico serve`` on the
    store of ``database_url``, its data and log (``serve.log``) under ``tmp_path``, with
    ``settings`` (``PORTICO_*``) and none of this process's own; its environment (the
    addresses it listens on) and process while it runs, stopped after."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTICO_")}
    env.update(
        PORTICO_DATA_DIR=str(tmp_path / "var"),
        PORTICO_DATABASE_URL=database_url,
        PORTICO_BOOTSTRAP_ADMIN_EMAIL=OWNER,
        PORTICO_BOOTSTRAP_ADMIN_PASSWORD=OWNER_PASSWORD,
        **settings,
    )
    subprocess.run([PORTICO, "bootstrap"], env=env, check=True, capture_output=True, timeout=120)
    process = start_serve(env, tmp_path / "serve.log", timeout=STARTUP)
    try:
        yield env, process
    finally:
        stop(process)
