"""What the five loggers (http-logger, stream-logger, columnar-logger, aggregator-logger,
search-logger) share at run time: the log phase, the entries, the batch and the HTTP send.

The log phase costs a request only an append: :class:`LoggerRuntime` (whose phases are
``log_entry.LogPhases``, compiled with the data plane) pushes a
:class:`~portico.gateway.telemetry.log_entry.Logged` (the context and the wall clock) into the
logger's batch processor (``_batching.batch_processor``: one per configuration, shared across
deploys). The entries are built when a batch is sent, by the processor's task
(:class:`EntryBuilder`: APISIX's full log format, credentials redacted, as JSON), a slice at a
time so
that a big batch does not hold the event loop; a retry reuses the entries already built. Each
logger supplies only its :data:`Sink`, which writes one batch of entries to its server.

The HTTP loggers post through :class:`HttpPoster`: the SSRF guard on every URL the user
configured, the answer read within a bound, a non-2xx answer a failed send
(:class:`~portico.gateway.telemetry.batch.BatchFailed`), retried then dropped and counted by
the processor. The leading underscore keeps the registry from taking this module for a plugin.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import httpx
import orjson

from portico.core.egress import BodyTooLarge, read_bounded
from portico.gateway.egress import EgressGuard, EgressRefused
from portico.gateway.outbound import guarded_request
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._batching import BatchingConfig, batch_processor
from portico.gateway.snapshot import SnapshotRoute
from portico.gateway.telemetry.batch import BatchFailed
from portico.gateway.telemetry.log_entry import (
    Logged,
    LogPhases,
    Redaction,
    full_log,
    retained_bytes,
)

#: entries built between two yields to the event loop (a slice costs about a millisecond)
BUILD_SLICE: Final = 128
#: routes whose redaction rules a builder remembers (a snapshot has this many, rarely more)
_MAX_ROUTES: Final = 4096
#: how much of a sink's answer is read (Elasticsearch's bulk answer names every document)
MAX_ANSWER_BYTES: Final = 32 * 1024 * 1024


def encode_json(value: Any) -> bytes:
    """``value`` as compact JSON (UTF-8); ``str()`` of what JSON has no type for. orjson:
    encoding was most of an entry's cost (the bench's entry: 2.7 us against the json
    module's 40 us on the same loaded machine), and every request pays it."""
    return orjson.dumps(value, default=str)


class Built:
    """A batch as a sink gets it: each entry as one compact JSON text (UTF-8), and when each
    request was logged (epoch seconds, e.g. Loki's timestamps). The same object comes back
    on a retry."""

    __slots__ = ("lines", "logged_at")

    def __init__(self, lines: list[bytes], logged_at: list[float]) -> None:
        self.lines = lines
        self.logged_at = logged_at


Sink = Callable[[Built], Awaitable[None]]


class EntryBuilder:
    """Builds the entries of a batch. It outlives snapshots (it belongs to the shared batch
    processor), so it keeps nothing of one: a route's redaction rules are remembered with the
    route object they were read from."""

    def __init__(self, env_id: str, node_id: str, request_body: bool, response_body: bool):
        self.env_id = env_id
        self.node_id = node_id
        self.request_body = request_body
        self.response_body = response_body
        self._redactions: dict[str, tuple[SnapshotRoute, Redaction]] = {}

    def redaction(self, route: SnapshotRoute) -> Redaction:
        known = self._redactions.get(route.id)
        if known is not None and known[0] is route:
            return known[1]
        if len(self._redactions) >= _MAX_ROUTES:
            self._redactions.clear()
        redaction = Redaction.for_route(route)
        self._redactions[route.id] = (route, redaction)
        return redaction

    def entry(self, logged: Logged) -> dict[str, Any]:
        ctx = logged.ctx
        return full_log(
            ctx,
            self.redaction(ctx.route),
            env_id=self.env_id,
            node_id=self.node_id,
            start_time=logged.start_time,
            request_body=self.request_body,
            response_body=self.response_body,
        )

    async def build(self, batch: list[Logged]) -> Built:
        """Entries built and encoded a slice at a time: one JSON encoding of a whole batch
        held the loop for 15 ms, a slice costs about a millisecond."""
        lines: list[bytes] = []
        encode, entry = encode_json, self.entry
        for start in range(0, len(batch), BUILD_SLICE):
            if start:
                await asyncio.sleep(0)  # let requests through between slices
            lines.extend(encode(entry(logged)) for logged in batch[start : start + BUILD_SLICE])
        return Built(lines, [logged.now for logged in batch])


def sender(builder: EntryBuilder, sink: Sink) -> Callable[[list[Logged]], Awaitable[None]]:
    """The batch processor's ``send``: build the entries (once per batch, whatever the
    retries), then hand them to ``sink``."""
    last: list[tuple[list[Logged], Built]] = []

    async def send(batch: list[Logged]) -> None:
        if last and last[0][0] is batch:
            built = last[0][1]
        else:
            built = await builder.build(batch)
            last[:] = [(batch, built)]  # a retry gets the same list back
        await sink(built)
        last.clear()  # sent: the requests it holds may go

    return send


class LoggerRuntime(LogPhases):
    """A logger's runtime: its phases are ``log_entry.LogPhases``'s (compiled), its batch the
    processor of its configuration. The request is never affected by the sink: a failed send
    is retried, then dropped and counted (``portico_log_entries_dropped_total``)."""

    def __init__(
        self,
        plugin: str,
        config: BatchingConfig,
        services: RuntimeServices,
        sink: Sink,
        *,
        request_body: bool = False,
        response_body: bool = False,
        close_grace: float = 5.0,
    ) -> None:
        builder = EntryBuilder(services.env_id, services.node_id, request_body, response_body)
        batch = batch_processor(
            plugin,
            config,
            services,
            sender(builder, sink),
            # without bodies a waiting request weighs about the same as any other, and the
            # processor's entry cap bounds them: no weighing per request
            weigh=retained_bytes if request_body or response_body else None,
            close_grace=close_grace,
        )
        super().__init__(batch, services.now, request_body, response_body)


class _UnverifiedClient:
    """The HTTP client of sinks configured not to verify TLS certificates (search-logger's
    ``ssl_verify: false``), shared like the verifying one."""

    def __init__(self) -> None:
        self.client = httpx.AsyncClient(timeout=10.0, trust_env=False, verify=False)  # noqa: S501  (the user's choice)

    async def aclose(self) -> None:
        await self.client.aclose()


class HttpPoster:
    """POSTs a batch's body to a sink through the SSRF guard. Built once per batch processor
    (it captures the gateway's shared client and guard, nothing of one snapshot)."""

    def __init__(self, services: RuntimeServices, *, verify: bool = True) -> None:
        if verify:
            self.client = services.http()
        else:
            self.client = services.shared("http-client", "unverified", _UnverifiedClient).client
        self.verify = verify
        self.guard: EgressGuard = services.egress

    async def post(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        seconds: float,
        *,
        params: Mapping[str, str] | None = None,
    ) -> bytes:
        """The answer's body; :class:`BatchFailed` for a refused destination, a non-2xx
        answer or an answer too long to read (transport errors and timeouts propagate: the
        processor counts them as failures by their type, never their text)."""
        http = self.client
        if http.is_closed:  # the shared client went first at shutdown: a last flush alone
            http = httpx.AsyncClient(trust_env=False, verify=self.verify)
        try:
            response = await guarded_request(
                http,
                self.guard,
                "POST",
                url,
                content=body,
                headers=dict(headers),
                params=params,
                timeout=seconds,
                stream=True,
            )
            answer = await read_bounded(response, MAX_ANSWER_BYTES)
        except EgressRefused as error:
            raise BatchFailed(f"refused by the egress guard: {error}") from None
        except BodyTooLarge:
            raise BatchFailed("the answer was too long to read") from None
        finally:
            if http is not self.client:
                await http.aclose()
        if not 200 <= response.status_code < 300:
            raise BatchFailed(f"the endpoint answered {response.status_code}")
        return answer
