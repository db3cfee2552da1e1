"""The wire form of ``POST /api/dataplane/v1/telemetry``.

Fields added with analytics (app, product and developer ids, the names that go with the
ids, min/max, the sketches) are optional, so an older node's batches still validate: its
rows carry no app, product or names, and their percentiles come from its 12-bucket latency
histogram (``latencyBuckets``), as coarse as it was."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Self

from pydantic import Field, PrivateAttr, model_validator

from portico.core.schema import WriteSchema
from portico.core.validation import invalid
from portico.gateway.telemetry.rollups import SKETCH_MAX_INDEX
from portico.management.telemetry.sketch import LEGACY_BUCKET_COUNT, Sketch, decode

Count = Annotated[int, Field(ge=0, le=10**15)]
Millis = Annotated[float, Field(ge=0, le=10**15, allow_inf_nan=False)]
Label = Annotated[str, Field(max_length=4096)]
Id = Annotated[str, Field(max_length=64)]
#: ``bin=count`` pairs, comma-separated (``portico.gateway.telemetry.sketch_text``)
SketchText = Annotated[
    str,
    Field(
        max_length=(SKETCH_MAX_INDEX + 1) * 21, pattern=r"^(\d{1,4}=\d{1,15}(,\d{1,4}=\d{1,15})*)?$"
    ),
]
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
    app_id: Id = Field("", description="The consumer's app ('' when none).")
    product_id: Id = Field("", description="The product that metered the request ('' none).")
    developer_id: Id = Field("", description="The app's developer ('' when none).")
    api_name: Label = ""
    route_name: Label = ""
    api_path: Label = Field("", description="The route's uri template.")
    upstream_path: Label = Field("", description="The path template the upstream receives.")
    app_name: Label = ""
    developer_email: Label = ""
    product_name: Label = ""
    requests: Count = Field(gt=0)
    latency_ms_sum: Millis
    latency_ms_min: Millis | None = None
    latency_ms_max: Millis
    upstream_requests: Count = 0
    upstream_ms_sum: Millis = 0.0
    upstream_ms_min: Millis | None = None
    upstream_ms_max: Millis | None = None
    request_bytes: Count = 0
    request_bytes_min: Count | None = None
    request_bytes_max: Count | None = None
    response_bytes: Count = 0
    response_bytes_min: Count | None = None
    response_bytes_max: Count | None = None
    transfer_bytes_min: Count | None = None
    transfer_bytes_max: Count | None = None
    latency_sketch: SketchText | None = Field(
        None, description="'bin=count,...' of the latency sketch (1 % relative accuracy)."
    )
    upstream_sketch: SketchText | None = None
    request_sketch: SketchText | None = None
    response_sketch: SketchText | None = None
    transfer_sketch: SketchText | None = None
    latency_buckets: list[Count] | None = Field(
        None,
        min_length=LEGACY_BUCKET_COUNT,
        max_length=LEGACY_BUCKET_COUNT,
        description="Older nodes: requests per latency bucket (instead of latencySketch).",
    )

    #: the sketches given, decoded by the validation
    _sketches: dict[str, Sketch] = PrivateAttr(default_factory=dict)

    @property
    def sketches(self) -> dict[str, Sketch]:
        return self._sketches

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        if self.minute.tzinfo is None:
            invalid(("minute",), "must carry a time zone (UTC)")
        if self.minute.second or self.minute.microsecond:
            invalid(("minute",), "must be the start of a minute")
        if self.latency_buckets is not None and sum(self.latency_buckets) != self.requests:
            invalid(("latencyBuckets",), "must add up to requests")
        if self.latency_sketch is None and self.latency_buckets is None:
            invalid(("latencySketch",), "required property 'latencySketch' not found")
        if self.upstream_requests > self.requests:
            invalid(("upstreamRequests",), "cannot exceed requests")
        for name, alias, total, counter in (
            ("latency_sketch", "latencySketch", self.requests, "requests"),
            ("upstream_sketch", "upstreamSketch", self.upstream_requests, "upstreamRequests"),
            ("request_sketch", "requestSketch", self.requests, "requests"),
            ("response_sketch", "responseSketch", self.requests, "requests"),
            ("transfer_sketch", "transferSketch", self.requests, "requests"),
        ):
            text = getattr(self, name)
            if text is None:
                continue
            bins = decode(text)
            if bins and max(bins) > SKETCH_MAX_INDEX:
                invalid((alias,), f"bins must be at most {SKETCH_MAX_INDEX}")
            self._sketches[name] = bins
            if sum(bins.values()) != total:
                invalid((alias,), f"must add up to {counter}")
        return self


class TelemetryBatch(WriteSchema):
    node_id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")
    environment_id: Annotated[uuid.UUID, Field(strict=False)]
    rollups: list[RollupIn] = Field(max_length=MAX_ROLLUPS)
    dropped: Count = Field(0, description="Records the node lost since its last delivery.")
