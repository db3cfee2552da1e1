"""What the five loggers (http-logger, stream-logger, columnar-logger, aggregator-logger,
search-logger) share at run time: the log phase, the entries, the batch and the HTTP send.

The log phase writes the request's entry and appends it to memory: :class:`LoggerRuntime`
(whose phases are ``log_entry.LogPhases``, compiled with the data plane) writes the entry
(``log_entry.EntryEncoder``: APISIX's full log format, credentials redacted, as one JSON text)
and pushes it, with the wall clock, into the logger's batch processor
(``_batching.batch_processor``: one per configuration, shared across deploys), whose task
sends full or timed-out batches. Each logger supplies only its :data:`Sink`, which writes one
batch of entries to its server.

The HTTP loggers post through :class:`HttpPoster` (``_sink_http``'s client, connections kept
alive between batches): the SSRF guard on every URL the user configured, the answer read
within a bound, a non-2xx answer a failed send
(:class:`~portico.gateway.telemetry.batch.BatchFailed`), retried then dropped and counted by
the processor. The leading underscore keeps the registry from taking this module for a plugin.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import orjson

from portico.core.egress import BodyTooLarge
from portico.gateway.egress import EgressRefused
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._batching import BatchingConfig, batch_processor, config_key
from portico.gateway.plugins._sink_http import AnswerError, SinkClient
from portico.gateway.telemetry.batch import BatchFailed
from portico.gateway.telemetry.log_entry import EntryBatch as EntryBatch  # the sinks' input
from portico.gateway.telemetry.log_entry import EntryEncoder, LogPhases

#: how much of a sink's answer is read (Elasticsearch's bulk answer names every document)
MAX_ANSWER_BYTES: Final = 32 * 1024 * 1024


def encode_json(value: Any) -> bytes:
    """``value`` as compact JSON (UTF-8); ``str()`` of what JSON has no type for (the sinks'
    own documents: a Loki push, a Kafka record's envelope)."""
    return orjson.dumps(value, default=str)


#: sends one batch; a retry gets the same batch again (a sink may remember by it what
#: already took the batch: aggregator-logger's addresses)
Sink = Callable[[EntryBatch], Awaitable[None]]


class LoggerRuntime(LogPhases):
    """A logger's runtime: its phases are ``log_entry.LogPhases``'s (compiled), its batch the
    processor of its configuration. The request is never affected by the sink: a failed send
    is retried, then dropped and counted (``portico_log_entries_dropped_total``).
    ``between``: what the sink sends between two entries of a batch (its batches are
    written so, and sent as they are: ``EntryBatch.view``); ``escaped``: the sink sends
    each entry as a JSON string (``EntryBatch.stamped``)."""

    def __init__(
        self,
        plugin: str,
        config: BatchingConfig,
        services: RuntimeServices,
        sink: Sink,
        *,
        between: bytes = b"",
        escaped: bool = False,
        request_body: bool = False,
        response_body: bool = False,
        close_grace: float = 5.0,
    ) -> None:
        encoder = EntryEncoder(
            services.env_id, services.node_id, request_body, response_body, escaped
        )
        expected = config.batch_max_size

        def new_batch() -> EntryBatch:
            return EntryBatch(between, expected, escaped)

        batch = batch_processor(plugin, config, services, sink, new_batch, close_grace=close_grace)
        super().__init__(batch, encoder, services.now)


class HttpPoster:
    """POSTs a batch's body to a sink through the SSRF guard, on connections kept alive
    between batches (``_sink_http.SinkClient``: httpx cost ~2.4 million instructions a
    POST). One per logger configuration, like its batch (:meth:`shared`)."""

    def __init__(self, services: RuntimeServices, *, verify: bool = True) -> None:
        self.client = SinkClient(services.egress, verify=verify)

    def shared(self, services: RuntimeServices, plugin: str, config: BatchingConfig) -> None:
        """Register this poster as the configuration's, after its batch: SharedResources
        closes in creation order, so the batch's last flush still has it. (A poster kept
        from an earlier snapshot stays the one its batch uses: one key for both; this one,
        never used, holds no connection.)"""
        services.shared("log-poster", config_key(plugin, config), lambda: self)

    async def post(
        self,
        url: str,
        body: Sequence[bytes | memoryview],
        headers: Mapping[str, str],
        seconds: float,
        *,
        params: Mapping[str, str] | None = None,
    ) -> bytes:
        """POST ``body`` (its parts, sent one after the other). The answer's body;
        :class:`BatchFailed` for a refused destination, a non-2xx
        answer, an answer too long to read or not HTTP (transport errors and timeouts
        propagate: the processor counts them as failures by their type, never their text)."""
        try:
            async with asyncio.timeout(seconds):
                status, answer = await self.client.post(
                    url, body, headers, params=params, limit=MAX_ANSWER_BYTES
                )
        except EgressRefused as error:
            raise BatchFailed(f"refused by the egress guard: {error}") from None
        except BodyTooLarge:
            raise BatchFailed("the answer was too long to read") from None
        except AnswerError as error:
            raise BatchFailed(str(error)) from None
        if not 200 <= status < 300:
            raise BatchFailed(f"the endpoint answered {status}")
        return answer

    async def aclose(self) -> None:
        await self.client.aclose()
