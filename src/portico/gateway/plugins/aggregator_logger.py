"""aggregator-logger: log entries pushed to Grafana Loki's push API.

A batch is one push (``POST <addr><endpoint_uri>``, JSON ``{"streams": [{"stream": labels,
"values": [[<ns timestamp>, <entry as JSON>], ...]}]}``, the tenant as ``X-Scope-OrgID``) to
EACH of ``endpoint_addrs`` (the design's "at each of": Loki instances that do not replicate
each other all get every line; APISIX's loki-logger picks one at random instead). A batch is
sent when every address took it; a retry goes only to the addresses that failed, so none gets
a line twice.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Annotated

from pydantic import Field

from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._batching import BatchingConfig
from portico.gateway.plugins._log_sink import (
    EntryBatch,
    HttpPoster,
    LoggerRuntime,
    Sink,
    encode_json,
)
from portico.gateway.plugins.base import Category, HttpUrl, PluginSpec
from portico.gateway.telemetry.batch import BatchFailed

LabelName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]  # Prometheus's
LabelValue = Annotated[str, Field(min_length=1, max_length=1024)]


class AggregatorLoggerConfig(BatchingConfig):
    endpoint_addrs: list[HttpUrl] = Field(
        min_length=1,
        max_length=16,
        description='Loki addresses, e.g. ["http://loki:3100"]; each batch goes to one of '
        "them. An array: a single endpoint_addr is not accepted.",
    )
    endpoint_uri: str = Field(
        "/loki/api/v1/push",
        max_length=1024,
        pattern=r"^/[^\s?#]*$",
        description="Path of the push API on each address.",
    )
    # Loki's own rule: up to 150 bytes of alphanumerics and !-_.*'(); "fake" is the tenant
    # of a Loki without multi-tenancy (and APISIX's loki-logger default)
    tenant_id: str = Field(
        "fake",
        pattern=r"^[A-Za-z0-9!._*'()-]{1,150}$",
        description="Tenant sent as X-Scope-OrgID.",
    )
    log_labels: dict[LabelName, LabelValue] = Field(
        default_factory=lambda: {"job": "portico"},
        min_length=1,
        max_length=32,
        description="Labels of the log stream.",
    )
    timeout: int = Field(
        3000, ge=1, le=60_000, description="Milliseconds to wait for Loki (as APISIX)."
    )


PLUGIN = PluginSpec(
    name="aggregator-logger",
    category=Category.OBSERVABILITY,
    order=953,
    reorderable=True,
    config=AggregatorLoggerConfig,
    description="Pushes log entries to Loki's push API with a tenant id.",
)


class AggregatorLoggerRuntime(LoggerRuntime):
    def __init__(self, config: AggregatorLoggerConfig, services: RuntimeServices) -> None:
        poster = HttpPoster(services)
        super().__init__(
            PLUGIN.name,
            config,
            services,
            _sink(config, poster),
            escaped=True,  # each entry is a JSON string of the push: written so at once
            close_grace=min(5.0, config.timeout / 1000),
        )
        poster.shared(services, PLUGIN.name, config)


def push_body(batch: EntryBatch, labels: bytes) -> tuple[bytes, bytes, bytes]:
    """Loki's push request, in three parts: one stream (``labels``, the configured labels as
    JSON), a line per entry stamped with the time its request was logged (nanoseconds since
    the epoch, as a string): ``{"streams":[{"stream":...,"values":[["<ns>","<entry>"],...]}]}``,
    the values written by ``EntryBatch.stamped`` (C in the native build)."""
    return (
        b'{"streams":[{"stream":' + labels + b',"values":[',
        batch.stamped(),
        b"]}]}",
    )


def _sink(config: AggregatorLoggerConfig, poster: HttpPoster) -> Sink:
    urls = [addr.rstrip("/") + config.endpoint_uri for addr in config.endpoint_addrs]
    headers = {"content-type": "application/json", "x-scope-orgid": config.tenant_id}
    labels = encode_json(dict(config.log_labels))
    timeout = config.timeout / 1000
    # the batch being sent and the addresses that already took it (a retry skips them)
    taken: list[tuple[EntryBatch, set[str]]] = []

    async def send(batch: EntryBatch) -> None:
        if not taken or taken[0][0] is not batch:
            taken[:] = [(batch, set())]
        done = taken[0][1]
        body = push_body(batch, labels)
        waiting = [url for url in urls if url not in done]
        results = await asyncio.gather(
            *(poster.post(url, body, headers, timeout) for url in waiting),
            return_exceptions=True,
        )
        failed: list[BaseException] = []
        for url, result in zip(waiting, results, strict=True):
            if isinstance(result, BaseException):
                failed.append(result)
            else:
                done.add(url)
        if not failed:
            taken.clear()
            return
        first = failed[0]
        reason = str(first) if isinstance(first, BatchFailed) else type(first).__name__
        raise BatchFailed(f"{len(failed)} of {len(urls)} Loki address(es) failed: {reason}")

    return send


PLUGIN = dataclasses.replace(PLUGIN, runtime=AggregatorLoggerRuntime)
