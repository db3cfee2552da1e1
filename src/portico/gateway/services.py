"""What plugin runtimes share within one environment's configuration: the consumers (indexed
by credential), counters, the clock, and the gateway's long-lived resources."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import httpx

from portico.gateway.counters import LocalCounters
from portico.gateway.egress import EgressGuard
from portico.gateway.resources import Resource, SharedResources
from portico.gateway.sealing import SecretBox
from portico.gateway.snapshot import SnapshotConsumer

R = TypeVar("R", bound=Resource)


@dataclass
class ConsumerIndex:
    by_name: dict[str, SnapshotConsumer] = field(default_factory=dict)
    #: credential lookups: plugin → indexed value → consumer, e.g. "key-auth" → sha256 of the
    #: key (two string-keyed dicts rather than one keyed by a pair: no tuple to build, hash and
    #: compare per authenticated request)
    by_credential: dict[str, dict[str, SnapshotConsumer]] = field(default_factory=dict)

    @classmethod
    def build(cls, consumers: Sequence[SnapshotConsumer]) -> ConsumerIndex:
        index = cls()
        for consumer in consumers:
            index.by_name[consumer.username] = consumer
            for plugin, credential in consumer.credentials.items():
                for field_name in ("key_hash", "key", "username"):
                    value = credential.get(field_name)
                    if isinstance(value, str):
                        index.by_credential.setdefault(plugin, {})[value] = consumer
                        break
        return index

    def find(self, plugin: str, value: str) -> SnapshotConsumer | None:
        found = self.by_credential.get(plugin)
        return found.get(value) if found is not None else None


class _HttpClient:
    """One pooled HTTP client for plugins' outbound calls, shared by every snapshot."""

    def __init__(self) -> None:
        self.client = httpx.AsyncClient(timeout=10.0, trust_env=False)

    async def aclose(self) -> None:
        await self.client.aclose()


@dataclass
class RuntimeServices:
    consumers: ConsumerIndex
    counters: LocalCounters
    now: Callable[[], float] = time.time
    env_id: str = ""
    #: opens encrypted consumer secrets; None when the node was given no server secret
    secrets: SecretBox | None = None
    egress: EgressGuard = field(default_factory=EgressGuard)
    resources: SharedResources = field(default_factory=SharedResources)
    cache_dir: Path = Path("var/cache")
    node_id: str = ""

    def shared(self, kind: str, key: str, factory: Callable[[], R]) -> R:
        """A resource that outlives this configuration (see ``gateway.resources``)."""
        return self.resources.get(self.env_id, kind, key, factory)

    def http(self) -> httpx.AsyncClient:
        """The outbound HTTP client; call it through ``outbound.guarded_request``."""
        return self.resources.get(self.env_id, "http-client", "", _HttpClient).client
