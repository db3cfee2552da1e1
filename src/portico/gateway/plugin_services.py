"""What plugin runtimes share within one environment's configuration: the consumers (indexed
by credential), counters, the clock, and the gateway's long-lived resources."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

from portico.gateway.counters.local import LocalCounters
from portico.gateway.egress import EgressGuard
from portico.gateway.sealing import SecretBox
from portico.gateway.shared_resources import Resource, SharedResources
from portico.gateway.snapshot import SnapshotConsumer, SnapshotProduct

R = TypeVar("R", bound=Resource)


@dataclass
class ConsumerIndex:
    """Who may call, as one environment's snapshot says: consumers by name and by credential,
    rotated-out credentials still in their grace period, and the products deployed there
    (what an app's consumer may use)."""

    by_name: dict[str, SnapshotConsumer] = field(default_factory=dict)
    #: credential lookups: plugin → indexed value → consumer, e.g. "key-auth" → sha256 of the
    #: key (two string-keyed dicts rather than one keyed by a pair: no tuple to build, hash and
    #: compare per authenticated request)
    by_credential: dict[str, dict[str, SnapshotConsumer]] = field(default_factory=dict)
    #: rotated-out credentials: plugin → indexed value → (consumer, the old credential, epoch
    #: seconds it expires)
    retiring: dict[str, dict[str, Retired]] = field(default_factory=dict)
    products: dict[str, SnapshotProduct] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        consumers: Sequence[SnapshotConsumer],
        products: Sequence[SnapshotProduct] = (),
    ) -> ConsumerIndex:
        index = cls()
        for consumer in consumers:
            index.by_name[consumer.username] = consumer
            for plugin, credential in consumer.credentials.items():
                value = _indexed_value(credential)
                if value is not None:
                    index.by_credential.setdefault(plugin, {})[value] = consumer
            for old in consumer.retiring:
                value = _indexed_value(old.credential)
                if value is not None:
                    entry = Retired(consumer, old.credential, old.expires_at)
                    index.retiring.setdefault(old.plugin, {})[value] = entry
        index.products = {product.id: product for product in products}
        return index

    def find(self, plugin: str, value: str) -> SnapshotConsumer | None:
        found = self.by_credential.get(plugin)
        return found.get(value) if found is not None else None

    def find_retiring(self, plugin: str, value: str, now: float) -> Retired | None:
        """The rotated-out credential indexed by ``value`` and its consumer, while its grace
        period lasts (asked only after the current credential failed, so current credentials
        pay nothing)."""
        found = self.retiring.get(plugin)
        entry = found.get(value) if found is not None else None
        if entry is None or now >= entry.expires_at:
            return None
        return entry


class Retired:
    """A credential replaced by a rotation that works until ``expires_at`` (epoch seconds)."""

    def __init__(
        self, consumer: SnapshotConsumer, credential: Mapping[str, Any], expires_at: float
    ) -> None:
        self.consumer = consumer
        self.credential = credential
        self.expires_at = expires_at


def _indexed_value(credential: Mapping[str, Any]) -> str | None:
    for field_name in ("key_hash", "key", "username", "client_id"):
        value = credential.get(field_name)
        if isinstance(value, str):
            return value
    return None


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
    #: Redis where product-quota counts (the node's configuration, shared by every node of
    #: the environment); empty: counted in this process
    quota_redis_url: str = ""

    def shared(self, kind: str, key: str, factory: Callable[[], R]) -> R:
        """A resource that outlives this configuration (see ``shared_resources``)."""
        return self.resources.get(self.env_id, kind, key, factory)

    def http(self) -> httpx.AsyncClient:
        """The outbound HTTP client; call it through ``outbound.guarded_request``."""
        return self.resources.get(self.env_id, "http-client", "", _HttpClient).client
