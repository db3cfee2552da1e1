"""What plugin runtimes share within one environment's configuration: the consumers (indexed
by credential), counters, and the clock."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from portico.gateway.counters import LocalCounters
from portico.gateway.snapshot import SnapshotConsumer


@dataclass
class ConsumerIndex:
    by_name: dict[str, SnapshotConsumer] = field(default_factory=dict)
    #: credential lookups: (plugin, indexed value) → consumer, e.g. ("key-auth", sha256 of key)
    by_credential: dict[tuple[str, str], SnapshotConsumer] = field(default_factory=dict)

    @classmethod
    def build(cls, consumers: Sequence[SnapshotConsumer]) -> ConsumerIndex:
        index = cls()
        for consumer in consumers:
            index.by_name[consumer.username] = consumer
            for plugin, credential in consumer.credentials.items():
                for field_name in ("key_hash", "key", "username"):
                    value = credential.get(field_name)
                    if isinstance(value, str):
                        index.by_credential[(plugin, value)] = consumer
                        break
        return index

    def find(self, plugin: str, value: str) -> SnapshotConsumer | None:
        return self.by_credential.get((plugin, value))


@dataclass
class RuntimeServices:
    consumers: ConsumerIndex
    counters: LocalCounters
    now: Callable[[], float] = time.time
