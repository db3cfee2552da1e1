"""ai-rate-limiting's per-request work, compiled with the data plane (``portico.native``).

Apart from ``config``, which holds the plugin's pydantic model (see CONVENTIONS.md "Compiled
modules"); it reads its settings through ``AiRateLimitingSettings`` once, when the route's
chain is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol

import orjson

from portico.gateway.context import BasePluginRuntime, Reply, RequestContext, ResponseHeaders
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._ai_chat import WANTS_USAGE
from portico.gateway.plugins.limit_count.runtime import LimitSettings, limit_scope


class AiRateLimitingSettings(LimitSettings, Protocol):
    """What the runtime reads of ``config.AiRateLimitingConfig``."""

    @property
    def limit(self) -> int: ...

    @property
    def time_window(self) -> int: ...

    @property
    def rejected_code(self) -> int: ...

    @property
    def limit_strategy(self) -> str: ...


_loads: Final = orjson.loads  # (an answer read whole: about a quarter of the stdlib's cost)
#: the most of a (non-streamed) answer kept to read its usage report
MAX_ANSWER: Final = 4 * 1024 * 1024
#: the longest SSE line kept while waiting for its end
MAX_LINE: Final = 1024 * 1024
_METER: Final = "ai-rate-limiting.meter"


class TokenWindows:
    """LLM tokens spent per key in fixed windows, in this process. A shared resource (see
    ``shared_resources``): a redeploy does not hand everyone a fresh budget."""

    def __init__(self, max_keys: int = 100_000) -> None:
        self._windows: dict[str, tuple[int, int]] = {}  # key → (window start, tokens)
        self._max_keys = max_keys

    def used(self, key: str, window: int, now: float) -> tuple[int, int]:
        """Tokens spent in the current window, and seconds until it ends."""
        start = int(now // window) * window
        found_start, tokens = self._windows.get(key, (start, 0))
        return (tokens if found_start == start else 0), start + window - int(now)

    def spend(self, key: str, tokens: int, window: int, now: float) -> None:
        start = int(now // window) * window
        found_start, spent = self._windows.get(key, (start, 0))
        if found_start != start:
            spent = 0
        if key not in self._windows and len(self._windows) >= self._max_keys:
            stale = [k for k, (s, _) in self._windows.items() if s < start]
            for old in stale or list(self._windows)[: self._max_keys // 2]:
                del self._windows[old]
        self._windows[key] = (start, spent + tokens)

    async def aclose(self) -> None:
        self._windows.clear()


class UsageMeter:
    """Reads the provider's usage report off the answer as it passes (a body filter that
    changes nothing): the JSON answer's ``usage``, or the usage of a streamed answer's chunks
    (the last one, with ``stream_options.include_usage``). A stream without one is counted
    by what arrived: one token per chunk that carried content."""

    __slots__ = ("body", "content_chunks", "field", "pending", "streaming", "usage")

    def __init__(self, streaming: bool, field: str) -> None:
        self.streaming = streaming
        self.field = field
        self.body: bytearray | None = bytearray()  # None: too long to keep
        self.pending = b""
        self.content_chunks = 0
        self.usage: int | None = None

    def __call__(self, ctx: RequestContext, chunk: bytes, last: bool) -> bytes:
        self.take(chunk, last)
        return chunk

    def take(self, chunk: bytes, last: bool) -> None:
        """Read ``chunk`` of the answer (``last``: its end)."""
        if self.streaming:
            self.scan(chunk, last)
        else:
            body = self.body
            if body is not None:
                if len(body) + len(chunk) > MAX_ANSWER:
                    self.body = None
                else:
                    body += chunk
                    if last:
                        self.read_usage(bytes(body))

    def scan(self, chunk: bytes, last: bool) -> None:
        lines = (self.pending + chunk).split(b"\n")
        self.pending = b"" if last else lines.pop()
        if len(self.pending) > MAX_LINE:
            self.pending = b""
        for line in lines:
            line = line.strip()
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if b'"usage"' in payload and self.read_usage(payload):
                continue
            if b'"content"' in payload:
                self.content_chunks += 1

    def read_usage(self, data: bytes) -> bool:
        try:
            usage = _loads(data).get("usage")
        except (ValueError, AttributeError, RecursionError):
            return False
        if isinstance(usage, dict):
            tokens = usage.get(self.field)
            if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
                self.usage = tokens
                return True
        return False

    def tokens(self) -> int:
        if self.usage is not None:
            return self.usage
        return self.content_chunks if self.streaming else 0


class AiRateLimitingRuntime(BasePluginRuntime):
    """``limit`` LLM tokens per ``time_window`` seconds per consumer (the client's address
    when no authentication plugin named one), per route. The tokens are counted from the
    provider's answers (``limit_strategy``: which of its usage figures) once they are known;
    a request is refused with ``rejected_code`` once the window's budget is spent, until the
    window ends. ``X-AI-RateLimit-Limit/Remaining/Reset`` tell the client where it stands
    (remaining: before this request's tokens, which are known only after its answer)."""

    def __init__(self, config: AiRateLimitingSettings, services: RuntimeServices) -> None:
        self.limit = config.limit
        self.window = config.time_window
        self.rejected_code = config.rejected_code
        self.field = config.limit_strategy
        self.scope = limit_scope(config)
        self.now: Callable[[], float] = services.now
        self.windows = services.shared("ai-rate-limiting", "", TokenWindows)
        self.limit_text = str(config.limit)

    def key(self, ctx: RequestContext) -> str:
        who = ctx.consumer.username if ctx.consumer is not None else ctx.client_ip
        return f"{self.scope}:{ctx.route.id}:{who}"

    def access(self, ctx: RequestContext) -> Reply | None:
        used, reset = self.windows.used(self.key(ctx), self.window, self.now())
        remaining = max(0, self.limit - used)
        headers = [
            ("x-ai-ratelimit-limit", self.limit_text),
            ("x-ai-ratelimit-remaining", str(remaining)),
            ("x-ai-ratelimit-reset", str(reset)),
        ]
        if remaining == 0:
            return Reply.error(self.rejected_code, "LLM token limit exceeded", headers)
        ctx.response_headers.update(headers)
        ctx.vars[WANTS_USAGE] = True
        ctx.vars[_METER] = None  # metered once the answer is known to be one
        return None

    def header_filter(self, ctx: RequestContext, status: int, headers: ResponseHeaders) -> None:
        if _METER not in ctx.vars or not 200 <= status < 300:
            return
        streaming = "text/event-stream" in (headers.get("content-type") or "")
        meter = ctx.vars[_METER] = UsageMeter(streaming, self.field)
        ctx.body_filters.append(meter)

    def log(self, ctx: RequestContext) -> None:
        meter = ctx.vars.get(_METER) if ctx._vars else None
        if isinstance(meter, UsageMeter):
            tokens = meter.tokens()
            if tokens:
                self.windows.spend(self.key(ctx), tokens, self.window, self.now())
