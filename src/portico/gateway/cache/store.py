"""Where proxy-cache keeps responses: a byte-bounded LRU in memory, or files on disk.

Both stores are shared resources (``RuntimeServices.shared``): one per zone, kept across
config swaps so a deploy does not empty the cache. They hold :class:`CachedResponse` values
under an opaque key; freshness is the caller's business (an expired entry is returned as is,
so the caller can tell EXPIRED from MISS, and is replaced by the next store).

The disk store writes one file per key, ``<root>/<h[:2]>/<h>`` with ``h`` the SHA-256 of the
key: a temp file renamed into place (readers never see half a file; a crash leaves only a
``.tmp-`` file, removed by the next scan), mode 0600 (responses may be personal). Files
start with a magic line and a JSON head (the full key, status, headers, times), then the
body. Its size is bounded: an index of file sizes, least recently used first (rebuilt from
the directory by a background scan at first use, in file-time order), drops the oldest files
once the zone is over its budget. Writes always run in a worker thread (measured on ext4:
~100-200 µs each, mostly mkstemp and rename); reads of files up to 64 KiB run inline (~15 µs
from the page cache, less than a thread hop), bigger ones in a thread. A lookup of a key
whose write is still in flight waits for that write, so a response stored by one request
is found by the next.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from portico.gateway.cache import files

#: APISIX's default zone sizes (``memory_size: 50m``, ``disk_size: 1G``)
MEMORY_ZONE_BYTES = 50 * 1024 * 1024
DISK_ZONE_BYTES = 1024 * 1024 * 1024
INLINE_READ_BYTES = 64 * 1024
_MAGIC = b"portico-cache 1\n"


@dataclass(frozen=True, slots=True)
class CachedResponse:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    stored_at: float  # wall-clock seconds (services.now): meaningful across restarts
    expires_at: float
    #: request header values the response varies on (its ``Vary``), as they were
    vary: tuple[tuple[str, str], ...] = ()

    def size(self, key: str) -> int:
        """What the entry costs a memory zone (the fixed part approximates object overhead)."""
        head = sum(len(k) + len(v) for k, v in (*self.headers, *self.vary))
        return 256 + len(key) + head + len(self.body)


class CacheStore(Protocol):
    async def get(self, key: str) -> CachedResponse | None: ...

    def put(self, key: str, entry: CachedResponse) -> None: ...

    async def purge(self, key: str) -> bool: ...

    async def aclose(self) -> None: ...


class MemoryStore:
    """Entries in this process, least recently used dropped first once over ``capacity``."""

    def __init__(self, capacity: int = MEMORY_ZONE_BYTES) -> None:
        self.capacity = capacity
        self.used = 0
        self._entries: OrderedDict[str, tuple[CachedResponse, int]] = OrderedDict()

    async def get(self, key: str) -> CachedResponse | None:
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return found[0]

    def put(self, key: str, entry: CachedResponse) -> None:
        self._drop(key)
        size = entry.size(key)
        if size > self.capacity:
            return
        entries = self._entries
        while self.used + size > self.capacity:
            _, (_, dropped) = entries.popitem(last=False)
            self.used -= dropped
        entries[key] = (entry, size)
        self.used += size

    async def purge(self, key: str) -> bool:
        return self._drop(key)

    def _drop(self, key: str) -> bool:
        found = self._entries.pop(key, None)
        if found is None:
            return False
        self.used -= found[1]
        return True

    async def aclose(self) -> None:
        self._entries.clear()
        self.used = 0


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def encode_head(key: str, entry: CachedResponse) -> bytes:
    head = {
        "key": key,
        "status": entry.status,
        "stored": entry.stored_at,
        "expires": entry.expires_at,
        "headers": entry.headers,
        "vary": entry.vary,
    }
    return _MAGIC + json.dumps(head, separators=(",", ":")).encode() + b"\n"


def decode(data: bytes, key: str) -> CachedResponse | None:
    """The entry in ``data``, or None if the file is damaged or holds another key."""
    if not data.startswith(_MAGIC):
        return None
    end = data.find(b"\n", len(_MAGIC))
    if end < 0:
        return None
    try:
        head = json.loads(data[len(_MAGIC) : end])
        if head["key"] != key:
            return None
        return CachedResponse(
            status=int(head["status"]),
            headers=tuple((str(k), str(v)) for k, v in head["headers"]),
            body=data[end + 1 :],
            stored_at=float(head["stored"]),
            expires_at=float(head["expires"]),
            vary=tuple((str(k), str(v)) for k, v in head["vary"]),
        )
    except (ValueError, KeyError, TypeError):
        return None


class DiskStore:
    """Files under ``root`` (see the module docstring), at most ``capacity`` bytes of them."""

    def __init__(self, root: Path, capacity: int = DISK_ZONE_BYTES) -> None:
        self.root = root
        self.capacity = capacity
        self.used = 0
        self._index: OrderedDict[str, int] = OrderedDict()  # file name → size, LRU first
        self._scanned = False
        self._scan: asyncio.Task[None] | None = None
        self._writes: dict[str, asyncio.Future[int]] = {}
        self._chores: set[asyncio.Future[Any]] = set()

    def path(self, key: str) -> Path:
        name = digest(key)
        return self.root / name[:2] / name

    async def get(self, key: str) -> CachedResponse | None:
        self._start()
        name = digest(key)
        pending = self._writes.get(name)
        if pending is not None:
            await asyncio.wait([pending])  # (not cancelled if this request is)
        size = self._index.get(name)
        if size is None and self._scanned:
            return None  # no file: no system call
        path = self.root / name[:2] / name
        if size is not None and size <= INLINE_READ_BYTES:
            data = files.read(path)
        else:
            data = await asyncio.to_thread(files.read, path)
        entry = decode(data, key) if data is not None else None
        if entry is None:
            self._forget(name)
            if data is not None:  # damaged: make room for a good copy
                self._chore(asyncio.to_thread(files.unlink, path))
            return None
        if name in self._index:
            self._index.move_to_end(name)
        return entry

    def put(self, key: str, entry: CachedResponse) -> None:
        self._start()
        name = digest(key)
        head = encode_head(key, entry)
        write = asyncio.ensure_future(
            asyncio.to_thread(files.write, self.root, name, head, entry.body)
        )
        self._writes[name] = write
        write.add_done_callback(lambda done: self._written(name, done))

    async def purge(self, key: str) -> bool:
        self._start()
        name = digest(key)
        pending = self._writes.get(name)
        if pending is not None:
            await asyncio.wait([pending])
        removed = await asyncio.to_thread(files.unlink, self.root / name[:2] / name)
        self._forget(name)
        return removed

    async def aclose(self) -> None:
        """Finish the writes in flight (a graceful restart keeps what was stored)."""
        waiting: list[asyncio.Future[Any]] = [*self._writes.values(), *self._chores]
        if self._scan is not None:
            self._scan.cancel()
            waiting.append(self._scan)
        if waiting:
            await asyncio.gather(*waiting, return_exceptions=True)

    # -- bookkeeping (on the event loop) -------------------------------------------------

    def _start(self) -> None:
        if self._scan is None:
            self._scan = asyncio.get_running_loop().create_task(self._load())

    async def _load(self) -> None:
        try:
            found = await asyncio.to_thread(files.scan, self.root)
        except OSError:
            found = []
        # what was stored or read since the scan began is more recent than any file found
        merged = OrderedDict((name, size) for name, size in found if name not in self._index)
        merged.update(self._index)
        self._index = merged
        self.used = sum(merged.values())
        self._scanned = True
        self._evict()

    def _written(self, name: str, done: asyncio.Future[int]) -> None:
        if self._writes.get(name) is done:
            del self._writes[name]
        if done.cancelled() or done.exception() is not None:
            return  # disk full, permissions...: the response was served, just not kept
        self._forget(name)
        self._index[name] = done.result()
        self.used += done.result()
        self._evict()

    def _forget(self, name: str) -> None:
        size = self._index.pop(name, None)
        if size is not None:
            self.used -= size

    def _evict(self) -> None:
        if not self._scanned or self.used <= self.capacity:
            return
        victims: list[Path] = []
        while self.used > self.capacity and self._index:
            name, size = self._index.popitem(last=False)
            self.used -= size
            victims.append(self.root / name[:2] / name)
        self._chore(asyncio.to_thread(files.unlink_all, victims))

    def _chore(self, work: Any) -> None:
        future = asyncio.ensure_future(work)
        self._chores.add(future)
        future.add_done_callback(self._chores.discard)
