"""The batch settings every logger shares (http-logger, stream-logger, columnar-logger,
aggregator-logger, search-logger): one place, so the five agree on names, defaults and bounds.

Loggers never block a request: entries go to a bounded in-memory batch that is flushed when
it is full (``batch_max_size``), when no entry arrived for ``inactive_timeout`` seconds, or
when its oldest entry is ``buffer_duration`` seconds old; a failed flush is retried
``max_retry_count`` times, ``retry_delay`` seconds apart, then dropped (and counted). Names and
defaults are APISIX's batch processor's, so configurations carry over; the processor itself is
``portico.gateway.telemetry.batch`` (which reads these fields through its ``BatchSettings``).
The leading underscore keeps the registry from taking this module for a plugin.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import Field

from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import PluginConfig
from portico.gateway.telemetry.batch import Batch, Batcher
from portico.gateway.telemetry.metrics import GatewayMetrics

B = TypeVar("B", bound=Batch)


class BatchingConfig(PluginConfig):
    """Base of a logger's configuration: the batch fields, then the logger's own."""

    batch_max_size: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="Entries per batch; a full batch is sent at once (1 sends every entry "
        "alone). The upper bound caps the memory one batch may hold.",
    )
    inactive_timeout: int = Field(
        5,
        ge=1,
        le=3600,
        description="Seconds without a new entry after which the batch is sent.",
    )
    buffer_duration: int = Field(
        60,
        ge=1,
        le=86_400,
        description="Seconds the oldest entry may wait before the batch is sent, however "
        "busy the route.",
    )
    max_retry_count: int = Field(
        0,
        ge=0,
        le=100,
        description="Retries of a failed send before the batch is dropped (and counted).",
    )
    retry_delay: int = Field(
        1,
        ge=0,
        le=3600,
        description="Seconds between two attempts to send a failed batch.",
    )


def batch_processor(
    plugin: str,
    config: BatchingConfig,
    services: RuntimeServices,
    send: Callable[[B], Awaitable[None]],
    new_batch: Callable[[], B],
    *,
    close_grace: float = 5.0,
) -> Batcher[B]:
    """The logger's processor for this configuration, shared across config swaps: the same
    configuration (on any route, in any snapshot) keeps the same batch, so a deploy does not
    lose entries waiting to be sent. Its drops are counted in the gateway's metrics. ``send``
    and ``new_batch`` are used only if the processor is new: they must capture nothing
    snapshot-specific."""
    metrics = services.shared("metrics", "", GatewayMetrics)
    return services.shared(
        "batch",
        config_key(plugin, config),
        lambda: Batcher(
            plugin,
            config,
            send,
            new_batch,
            dropped=metrics.dropped_counter(plugin),
            close_grace=close_grace,
        ),
    )


def config_key(plugin: str, config: BatchingConfig) -> str:
    """The key of what a logger's configuration shares across snapshots (its batch, a
    stream-logger's producer): equal configurations, equal keys."""
    return hashlib.sha256(f"{plugin}\0{config.model_dump_json()}".encode()).hexdigest()
