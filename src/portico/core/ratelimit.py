"""Rate limits of the control plane's own endpoints (sign-in attempts, token refreshes).

A sliding-window log: at most ``limit.attempts`` hits per key in any ``limit.window``
seconds, and a refused caller is told how long until the oldest counted hit leaves the
window (``Retry-After``). Refused hits are not logged, so a caller that keeps trying is let in
again as soon as the window frees, and the log of a key never holds more than ``attempts``
entries.

Counters are in the process by default. With ``PORTICO_REDIS_URL`` they live in Redis (one
sorted set per key, updated by one Lua script, so the check and the count are atomic across
every process sharing that Redis). Time comes from the application's :class:`Clock` in both
cases, so the window is the same whichever store counts and tests can move it.

A Redis failure must not lock everyone out, nor let everyone in: the process counts locally
until Redis answers again (tried again after a short cool-down), and says so once per outage.
The URL is the operator's (not a user's), so it does not go through the SSRF guard.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from collections import deque
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from portico.core.clock import Clock

logger = logging.getLogger("portico.ratelimit")

# KEYS[1] the log; ARGV: now (ms), window (ms), attempts, a unique member for this hit.
# Returns {allowed (0/1), remaining, wait (ms until the oldest counted hit leaves)}.
SLIDING_LOG = """
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local attempts = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < attempts then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, attempts - count - 1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, 0, tonumber(oldest[2]) + window - now}
"""

TIMEOUT = 1.0  # seconds: a slow Redis delays a sign-in by at most this, then we count locally
COOL_DOWN = 5.0  # seconds of local counting after a failure before Redis is tried again
SWEEP_AT = 10_000  # keys per limit before expired local logs are swept
MAX_KEYS = 100_000  # keys per limit kept locally at most (many spoofed addresses)


@dataclass(frozen=True)
class Limit:
    name: str  # the counter's namespace, e.g. "admin-api-token"
    attempts: int
    window: int  # seconds


@dataclass(frozen=True)
class Decision:
    allowed: bool
    remaining: int
    retry_after: int  # whole seconds until a hit would be allowed; 0 when allowed


class LocalCounters:
    """The in-process sliding logs: one deque of hit times per key."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._logs: dict[str, dict[str, deque[float]]] = {}

    def hit(self, limit: Limit, key: str) -> Decision:
        now = self._clock.timestamp()
        logs = self._logs.setdefault(limit.name, {})
        log = logs.get(key)
        if log is None:
            if len(logs) >= SWEEP_AT:
                self._sweep(logs, limit, now)
            log = logs[key] = deque()
        while log and log[0] <= now - limit.window:
            log.popleft()
        if len(log) < limit.attempts:
            log.append(now)
            return Decision(True, limit.attempts - len(log), 0)
        return Decision(False, 0, _seconds(log[0] + limit.window - now))

    @staticmethod
    def _sweep(logs: dict[str, deque[float]], limit: Limit, now: float) -> None:
        for key in [k for k, log in logs.items() if not log or log[-1] <= now - limit.window]:
            del logs[key]
        # Still too many live keys: forget the oldest ones rather than grow without bound.
        for key in list(logs)[: max(0, len(logs) - MAX_KEYS + 1)]:
            del logs[key]


class RedisCounters:
    """The same logs in Redis, shared by every process that uses it."""

    def __init__(self, url: str, clock: Clock, *, prefix: str) -> None:
        self._clock = clock
        self._prefix = prefix
        self._client: Redis = Redis.from_url(
            url,
            socket_connect_timeout=TIMEOUT,
            socket_timeout=TIMEOUT,
            # one immediate retry replaces a pooled connection Redis closed meanwhile; a
            # timeout is not retried (the hit may have been counted)
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
        )
        self._script = self._client.register_script(SLIDING_LOG)

    async def hit(self, limit: Limit, key: str) -> Decision:
        now_ms = int(self._clock.timestamp() * 1000)
        window_ms = limit.window * 1000
        member = f"{now_ms}:{secrets.token_hex(6)}"  # two hits in one millisecond both count
        reply = await self._script(
            keys=[f"{self._prefix}:{limit.name}:{key}"],
            args=[now_ms, window_ms, limit.attempts, member],
        )
        allowed, remaining, wait_ms = (int(v) for v in reply)
        return Decision(bool(allowed), remaining, 0 if allowed else _seconds(wait_ms / 1000))

    async def aclose(self) -> None:
        await self._client.aclose()


class RateLimiter:
    """Counts hits in Redis when configured, else (and while Redis fails) in the process."""

    def __init__(self, clock: Clock, *, redis_url: str = "", prefix: str = "portico:rl") -> None:
        self.local = LocalCounters(clock)
        self.redis: RedisCounters | None = None
        if redis_url:
            try:
                self.redis = RedisCounters(redis_url, clock, prefix=prefix)
            except ValueError:  # not a redis:// URL; never echo it (it may hold a password)
                logger.error("PORTICO_REDIS_URL is not a Redis URL; counting in this process")
        self._down_until = 0.0
        self._degraded = False

    async def hit(self, limit: Limit, key: str) -> Decision:
        if self.redis is not None and time.monotonic() >= self._down_until:
            try:
                decision = await self.redis.hit(limit, key)
            except (RedisError, OSError, TimeoutError, ValueError) as error:
                self._down_until = time.monotonic() + COOL_DOWN
                if not self._degraded:
                    self._degraded = True
                    # the URL may hold a password: name the error only
                    logger.warning(
                        "rate-limit counters in Redis failed (%s); counting in this process "
                        "until Redis answers again",
                        type(error).__name__,
                    )
            else:
                if self._degraded:
                    self._degraded = False
                    logger.info("rate-limit counters are back in Redis")
                return decision
        return self.local.hit(limit, key)

    async def aclose(self) -> None:
        if self.redis is not None:
            await self.redis.aclose()


def _seconds(wait: float) -> int:
    return max(1, math.ceil(wait))
