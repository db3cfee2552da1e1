"""The wire form of ``POST /api/dataplane/v1/telemetry``."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Self

from pydantic import Field, model_validator

from portico.core.schema import WriteSchema
from portico.core.validation import invalid
from portico.gateway.telemetry import BUCKET_COUNT

Count = Annotated[int, Field(ge=0, le=10**15)]
Millis = Annotated[float, Field(ge=0, le=10**15, allow_inf_nan=False)]
#: the largest batch a node sends (its in-memory bound is 50,000 keys, shipped every 5 s)
MAX_ROLLUPS = 10_000


class RollupIn(WriteSchema):
    minute: Annotated[datetime, Field(strict=False)] = Field(
        description="Start of the minute (UTC, seconds zero)."
    )
    api_id: str = Field(max_length=64, description="API id ('' when none).")
    route_id: str = Field(max_length=128)
    consumer: str = Field("", max_length=128, description="Consumer username ('' when none).")
    method: str = Field(min_length=1, max_length=16, pattern=r"^[A-Z]+$")
    status: int = Field(ge=100, le=999)
    requests: Count = Field(gt=0)
    latency_ms_sum: Millis
    latency_ms_max: Millis
    upstream_requests: Count = 0
    upstream_ms_sum: Millis = 0.0
    request_bytes: Count = 0
    response_bytes: Count = 0
    latency_buckets: list[Count] = Field(
        min_length=BUCKET_COUNT, max_length=BUCKET_COUNT, description="Requests per bucket."
    )

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        if self.minute.tzinfo is None:
            invalid(("minute",), "must carry a time zone (UTC)")
        if self.minute.second or self.minute.microsecond:
            invalid(("minute",), "must be the start of a minute")
        if sum(self.latency_buckets) != self.requests:
            invalid(("latencyBuckets",), "must add up to requests")
        if self.upstream_requests > self.requests:
            invalid(("upstreamRequests",), "cannot exceed requests")
        return self


class TelemetryBatch(WriteSchema):
    node_id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")
    environment_id: Annotated[uuid.UUID, Field(strict=False)]
    rollups: list[RollupIn] = Field(max_length=MAX_ROLLUPS)
    dropped: Count = Field(0, description="Records the node lost since its last delivery.")
