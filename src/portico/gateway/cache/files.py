"""File work of proxy-cache's disk store (see ``store``): run in worker threads, or
inline for small reads. Names are ``<root>/<h[:2]>/<h>``; writes go to a ``.tmp-`` file in
``root`` renamed into place, so a reader never sees half a file."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

STALE_TEMP_SECONDS = 300.0  # older temp files are leftovers of a crash, not writes in flight


def read(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError:
        return None


def write(root: Path, name: str, head: bytes, body: bytes) -> int:
    """Store ``head + body`` as ``name`` (mode 0600: responses may be personal); its size."""
    directory = root / name[:2]
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=root)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(head)
            file.write(body)
        os.replace(temp, directory / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return len(head) + len(body)


def unlink(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def unlink_all(paths: list[Path]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink()


def scan(root: Path) -> list[tuple[str, int]]:
    """Cache files under ``root`` as (name, size), oldest first; removes crash leftovers."""
    found: list[tuple[float, str, int]] = []
    cutoff = time.time() - STALE_TEMP_SECONDS
    try:
        top = list(os.scandir(root))
    except FileNotFoundError:
        return []
    for entry in top:
        if entry.name.startswith(".tmp-"):
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
        elif len(entry.name) == 2 and entry.is_dir(follow_symlinks=False):
            with contextlib.suppress(OSError), os.scandir(entry.path) as files:
                for file in files:
                    if len(file.name) == 64 and file.is_file(follow_symlinks=False):
                        stat = file.stat()
                        found.append((stat.st_mtime, file.name, stat.st_size))
    found.sort()
    return [(name, size) for _, name, size in found]
