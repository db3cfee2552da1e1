"""Fixed-window counters shared in Redis (limit-count's ``redis`` policy), atomic across every
gateway worker and node that uses the same Redis.

One Lua script does INCR and, on a window's first hit, PEXPIRE, and returns the count and the
time left, in one round trip: no two gateways can both see "one left". The script is called
by its SHA (EVALSHA); a Redis that does not know it yet (restarted, flushed) answers NOSCRIPT
and gets it once with EVAL, which also caches it there.

The Redis URL comes from a plugin configuration, so its host goes through the SSRF guard and
the connection goes to the address that was checked. A dead Redis never hangs requests:
timeouts are short, and after a connection failure calls fail fast for a moment instead of
each waiting for its own connect timeout.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.connection import Connection, SSLConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from portico.gateway.counters.local import Admission
from portico.gateway.egress import EgressGuard, EgressRefused

logger = logging.getLogger("portico.gateway.redis")

# KEYS[1] the counter, ARGV[1] the window in ms. A key found without expiry (written by
# someone else, or a window whose PEXPIRE never ran) would count forever: it gets one too.
HIT_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {count, tonumber(ARGV[1])}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
"""
HIT_SHA = hashlib.sha1(HIT_SCRIPT.encode()).hexdigest()  # noqa: S324 - Redis names scripts so

CONNECT_TIMEOUT = 1.0
OPERATION_TIMEOUT = 1.0
POOL_SIZE = 64  # connections per Redis per process; more requests wait (POOL_WAIT) for one
POOL_WAIT = 1.0
COOL_DOWN = 1.0  # after a connection failure, fail fast this long before trying again
LOG_INTERVAL = 30.0  # at most one warning per Redis per interval, not one per request


class RedisUnavailable(Exception):
    """Redis could not count this request (unreachable, refused by the SSRF guard, erroring)."""


@dataclass(frozen=True)
class RedisTarget:
    scheme: str
    hostname: str
    port: int
    db: int
    username: str | None
    password: str | None

    @classmethod
    def parse(cls, url: str) -> RedisTarget:
        """The parts of a URL the config model already validated."""
        parts = urlsplit(url)
        path = parts.path.lstrip("/")
        return cls(
            scheme=parts.scheme,
            hostname=parts.hostname or "",
            port=parts.port or 6379,
            db=int(path) if path else 0,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password is not None else None,
        )

    @property
    def label(self) -> str:
        """How logs name it: never with its credentials."""
        return f"{self.scheme}://{self.hostname}:{self.port}/{self.db}"


class _PinnedSSLConnection(SSLConnection):
    """TLS to the checked address, presenting and verifying the URL's host name."""

    def __init__(self, *, server_hostname: str, **kwargs: Any) -> None:
        self.server_hostname = server_hostname
        super().__init__(**kwargs)

    def _connection_arguments(self) -> Mapping[str, Any]:
        return {**super()._connection_arguments(), "server_hostname": self.server_hostname}


class RedisCounters:
    """Counters in one Redis; a shared resource (one connection pool per URL per process)."""

    def __init__(self, url: str, egress: EgressGuard) -> None:
        self.target = RedisTarget.parse(url)
        self._egress = egress
        self._client: Redis | None = None
        self._address: str | None = None
        self._stale = True  # resolve (again) before the next use
        self._lock = asyncio.Lock()
        self._down_until = 0.0
        self._last_logged = -math.inf
        self._unlogged = 0

    async def hit(self, key: str, limit: int, window: int) -> Admission:
        """Count one request against ``key`` (``limit`` per ``window`` seconds).

        Raises :class:`RedisUnavailable`; the caller decides between degrading and failing.
        """
        if time.monotonic() < self._down_until:
            self._unlogged += 1
            raise RedisUnavailable("redis is cooling down after a failure")
        try:
            client = await self._connected()
            try:
                reply = await client.evalsha(HIT_SHA, 1, key, window * 1000)
            except NoScriptError:
                reply = await client.eval(HIT_SCRIPT, 1, key, window * 1000)
            count, ttl = int(reply[0]), int(reply[1])
        except (RedisConnectionError, RedisTimeoutError, OSError, EgressRefused) as error:
            self._stale = True  # the name may point elsewhere now
            self._down_until = time.monotonic() + COOL_DOWN
            self._log(error)
            raise RedisUnavailable(str(error)) from None
        except (RedisError, ValueError, TypeError, IndexError) as error:
            self._log(error)
            raise RedisUnavailable(str(error)) from None
        reset = max(1, math.ceil(ttl / 1000)) if ttl > 0 else window
        return Admission(count <= limit, max(0, limit - count), reset)

    async def _connected(self) -> Redis:
        if not self._stale and self._client is not None:
            return self._client
        async with self._lock:  # one resolution for the requests that arrive together
            if self._stale or self._client is None:
                target = self.target
                address = await self._egress.resolve(target.hostname, target.port)
                if address != self._address or self._client is None:
                    previous, self._client = self._client, self._open(address)
                    self._address = address
                    if previous is not None:
                        await previous.aclose()
                self._stale = False
            return self._client

    def _open(self, address: str) -> Redis:
        target = self.target
        options: dict[str, Any] = {}
        connection_class: type[Connection] = Connection
        if target.scheme == "rediss":
            connection_class = _PinnedSSLConnection
            options = {
                "server_hostname": target.hostname,
                "ssl_cert_reqs": ssl.CERT_REQUIRED,
                "ssl_check_hostname": True,
            }
        pool = BlockingConnectionPool(
            connection_class=connection_class,
            max_connections=POOL_SIZE,
            timeout=POOL_WAIT,
            host=address,
            port=target.port,
            db=target.db,
            username=target.username,
            password=target.password,
            socket_connect_timeout=CONNECT_TIMEOUT,
            socket_timeout=OPERATION_TIMEOUT,
            # one immediate retry replaces a pooled connection Redis closed meanwhile; a
            # timeout is not retried (the INCR may have happened)
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
            driver_info=None,  # no CLIENT SETINFO round trips on each new connection
            **options,
        )
        return Redis.from_pool(pool)  # closing the client closes its pool

    def _log(self, error: BaseException) -> None:
        now = time.monotonic()
        if now - self._last_logged < LOG_INTERVAL:
            self._unlogged += 1
            return
        logger.warning(
            "redis %s failed: %s: %s (%d more failures since the last report)",
            self.target.label,
            type(error).__name__,
            error,
            self._unlogged,
        )
        self._last_logged, self._unlogged = now, 0

    async def aclose(self) -> None:
        client, self._client = self._client, None
        self._stale = True
        if client is not None:
            await client.aclose()
