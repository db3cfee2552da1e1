"""Running a test server of this package by hand, from the repository root:

    .venv/bin/python tests/support/<name>.py --port N [options]

A file run by its path belongs to no package, so its imports of ``tests.support`` (relative or
not) would fail. Such a module starts with this guard, before any other import::

    if __name__ == "__main__" and not __package__:  # run by its path: see by_hand.py
        from by_hand import run_as_module

        run_as_module(__file__)

(``tests/support/`` is then ``sys.path[0]``, so this file imports as ``by_hand``: it uses the
standard library only.) :func:`run_as_module` runs the file again as ``tests.support.<name>``
with the repository root on ``sys.path``, as ``python -m`` would: the server then runs the
very code the tests import. Its ``__main__`` block hands :func:`serve` its options and a
context manager starting the server and giving the line to print; :func:`serve` prints it,
waits for Ctrl-C or SIGTERM and leaves the context, which stops the server cleanly.
"""

from __future__ import annotations

import argparse
import runpy
import signal
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import NoReturn

#: what a server started by hand says first, once it accepts connections
LISTENING = "listening on"


def run_as_module(file: str) -> NoReturn:
    """Run ``tests/support/<name>.py`` (``file``) as the module ``tests.support.<name>``."""
    path = Path(file).resolve()
    root = path.parents[2]
    # tests/support/ goes: its modules (process, clock...) would shadow others of those names
    kept = [entry for entry in sys.path if Path(entry).resolve() != path.parent]
    sys.path[:] = [str(root), *kept]
    runpy.run_module(f"tests.support.{path.stem}", run_name="__main__", alter_sys=True)
    sys.exit()


def command_line(
    description: str, *, port: int | None, port_help: str = "(default: %(default)s)"
) -> argparse.ArgumentParser:
    """The options every server takes (``--host``, ``--port``); the module adds its own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: %(default)s)"
    )
    parser.add_argument("--port", type=int, default=port, help=f"port to listen on {port_help}")
    return parser


_saying = threading.Lock()


def say(line: str) -> None:
    """Print ``line`` at once (servers report from their own threads: lines never mix)."""
    with _saying:
        print(line, flush=True)


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve(
    parser: argparse.ArgumentParser,
    server: Callable[[argparse.Namespace], AbstractContextManager[str]],
) -> None:
    """Parse the command line, enter ``server(arguments)`` (it starts the server and gives
    the line saying where it listens), print that line, and serve until Ctrl-C or SIGTERM.
    A server that cannot start (its port taken...) exits with status 1 and the reason."""
    signal.signal(signal.SIGTERM, _stop)  # from the start: a stop while starting cleans up too
    arguments = parser.parse_args()
    try:
        with server(arguments) as listening:
            say(listening)
            while True:
                signal.pause()
    except KeyboardInterrupt:
        return
    except (OSError, RuntimeError) as error:
        sys.exit(f"{parser.prog}: cannot serve: {error}")
