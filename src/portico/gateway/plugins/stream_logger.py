"""stream-logger: log entries produced to a Kafka topic.

The seed names the topic field "``<broker>_topic``": APISIX's kafka-logger calls it
``kafka_topic``, and the seed writes product names with a neutral word (kafka-logger became
stream-logger), so ``<broker>`` stands for that word and the field is ``stream_topic``.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from portico.gateway.plugins._batching import BatchingConfig
from portico.gateway.plugins.base import Category, PluginSpec

_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")


def _broker_host(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if len(value) > 253 or not _HOSTNAME.match(value):
            raise ValueError(f"broker {value!r} is not a hostname or IP address") from None
    return value


BrokerHost = Annotated[str, AfterValidator(_broker_host)]
BrokerPort = Annotated[int, Field(ge=1, le=65535)]


class StreamLoggerConfig(BatchingConfig):
    broker_list: dict[BrokerHost, BrokerPort] = Field(
        min_length=1,
        max_length=64,
        description='Kafka brokers as host → port, e.g. {"kafka-1": 9092, "10.0.0.7": 9092}.',
    )
    stream_topic: str = Field(
        pattern=r"^[A-Za-z0-9._-]{1,249}$",
        description='Kafka topic the entries are produced to. The seed\'s "<broker>_topic": '
        "APISIX's kafka_topic with the product name replaced by the seed's neutral word.",
    )
    key: str | None = Field(
        None,
        min_length=1,
        max_length=256,
        description="Message key (picks the partition); unset spreads entries over partitions.",
    )
    timeout: int = Field(3, ge=1, le=60, description="Seconds to wait for a broker.")
    producer_type: Literal["async", "sync"] = Field(
        "async",
        description='"async" buffers messages in the producer, "sync" sends each batch and '
        "waits for the acknowledgement.",
    )
    required_acks: int = Field(
        1,
        ge=-1,
        le=1,
        description="Acknowledgements awaited: 1 (the partition leader) or -1 (all in-sync "
        "replicas); 0 (none, so losses go unseen) is refused as APISIX does.",
    )

    @field_validator("stream_topic")
    @classmethod
    def _not_dots(cls, topic: str) -> str:
        if topic in (".", ".."):
            raise ValueError('stream_topic cannot be "." or ".."')  # Kafka refuses them
        return topic

    @field_validator("required_acks")
    @classmethod
    def _acknowledged(cls, acks: int) -> int:
        if acks == 0:
            raise ValueError("required_acks must be 1 or -1 (0 is not supported)")
        return acks


PLUGIN = PluginSpec(
    name="stream-logger",
    category=Category.OBSERVABILITY,
    order=951,
    reorderable=True,
    config=StreamLoggerConfig,
    description="Produces log entries to a Kafka topic.",
)
