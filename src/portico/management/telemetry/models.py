"""Traffic rollups sent by gateway nodes, in two tiers, and the records nodes lost.

One row per (environment, period, API, route, consumer, method, status, app, product,
developer): the analytics read these, never raw requests. ``telemetry_rollups`` holds
minutes, ``telemetry_rollups_hourly`` the same keys per hour; ingest adds every rollup to
both (one transaction), so a long window reads hours and only its ragged edges read minutes,
and minutes past their retention are deleted with nothing lost (their hour has them).

Counters and sums are additive and min/max merge, so rows from several nodes (or several
batches of one) merge exactly; so do the percentile sketches (see
``portico.management.telemetry.sketch``): merging adds bin counts. A minute's sketches sit in
its row (a few bins each); an hour's are in ``telemetry_sketches_hourly``, one row per key and
measure, so that a percentile query over a day reads one measure's sketches in key order and
nothing else (measured in ``bench/bench_analytics.py``: the wide hourly rows, five sketches of
a few hundred bins each, cost a page lookup per row). The names beside the ids
(API, route, app, developer, product, environment) are the ones the node's snapshot had when
it served the traffic: they outlive the entities, and a renamed entity's new name shows from
the minute it was renamed.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base
from portico.core.db.types import UTCDateTime

#: the measures that merge by addition
ADDED = (
    "requests",
    "latency_ms_sum",
    "upstream_requests",
    "upstream_ms_sum",
    "request_bytes",
    "response_bytes",
)
#: (min column, max column, count column that says whether they mean anything)
EXTREMES = (
    ("latency_ms_min", "latency_ms_max", "requests"),
    ("upstream_ms_min", "upstream_ms_max", "upstream_requests"),
    ("request_bytes_min", "request_bytes_max", "requests"),
    ("response_bytes_min", "response_bytes_max", "requests"),
    ("transfer_bytes_min", "transfer_bytes_max", "requests"),
)
SKETCHES = (
    "latency_sketch",
    "upstream_sketch",
    "request_sketch",
    "response_sketch",
    "transfer_sketch",
)
#: the names stored beside the ids (latest wins on merge)
NAMES = (
    "env_name",
    "api_name",
    "route_name",
    "api_path",
    "upstream_path",
    "app_name",
    "developer_email",
    "product_name",
)
#: the key after the environment and the period
KEY = (
    "api_id",
    "route_id",
    "consumer",
    "method",
    "status",
    "app_id",
    "product_id",
    "developer_id",
)


class RollupColumns:
    """What both tiers hold besides their period column."""

    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    api_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    route_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    consumer: Mapped[str] = mapped_column(String(128), primary_key=True)
    method: Mapped[str] = mapped_column(String(16), primary_key=True)
    status: Mapped[int] = mapped_column(Integer, primary_key=True)
    app_id: Mapped[str] = mapped_column(String(64), primary_key=True, server_default="")
    product_id: Mapped[str] = mapped_column(String(64), primary_key=True, server_default="")
    developer_id: Mapped[str] = mapped_column(String(64), primary_key=True, server_default="")
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"))
    env_name: Mapped[str] = mapped_column(Text(), server_default="")
    api_name: Mapped[str] = mapped_column(Text(), server_default="")
    route_name: Mapped[str] = mapped_column(Text(), server_default="")
    api_path: Mapped[str] = mapped_column(Text(), server_default="")
    upstream_path: Mapped[str] = mapped_column(Text(), server_default="")
    app_name: Mapped[str] = mapped_column(Text(), server_default="")
    developer_email: Mapped[str] = mapped_column(Text(), server_default="")
    product_name: Mapped[str] = mapped_column(Text(), server_default="")
    requests: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_ms_sum: Mapped[float] = mapped_column(Float, default=0.0)
    latency_ms_min: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    latency_ms_max: Mapped[float] = mapped_column(Float, default=0.0)
    upstream_requests: Mapped[int] = mapped_column(BigInteger, default=0)
    upstream_ms_sum: Mapped[float] = mapped_column(Float, default=0.0)
    upstream_ms_min: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    upstream_ms_max: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    request_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    request_bytes_min: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    request_bytes_max: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    response_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    response_bytes_min: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    response_bytes_max: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    transfer_bytes_min: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    transfer_bytes_max: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class TelemetryRollup(RollupColumns, Base):
    """Per minute."""

    __tablename__ = "telemetry_rollups"
    __table_args__ = (Index("ix_telemetry_rollups_org_minute", "org_id", "minute"),)

    minute: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)
    latency_sketch: Mapped[str] = mapped_column(Text(), default="", server_default="")
    upstream_sketch: Mapped[str] = mapped_column(Text(), default="", server_default="")
    request_sketch: Mapped[str] = mapped_column(Text(), default="", server_default="")
    response_sketch: Mapped[str] = mapped_column(Text(), default="", server_default="")
    transfer_sketch: Mapped[str] = mapped_column(Text(), default="", server_default="")


#: what the hourly tier's covering index holds besides (org_id, hour): the columns every
#: query but percentiles and total-transfer extremes reads (31 in all: PostgreSQL's limit is 32)
COVERED = (
    "environment_id",
    "api_id",
    *NAMES,
    "route_id",
    "app_id",
    "method",
    "status",
    "consumer",
    "requests",
    "latency_ms_sum",
    "latency_ms_min",
    "latency_ms_max",
    "upstream_requests",
    "upstream_ms_sum",
    "upstream_ms_min",
    "upstream_ms_max",
    "request_bytes",
    "request_bytes_min",
    "request_bytes_max",
    "response_bytes",
    "response_bytes_min",
    "response_bytes_max",
)


class TelemetryHourlyRollup(RollupColumns, Base):
    """Per hour: the minutes of the hour added up (sketches aside: ``TelemetryHourlySketch``).
    The queries read a covering index rather than the rows (measured: a day's count query
    read 5x fewer pages on SQLite)."""

    __tablename__ = "telemetry_rollups_hourly"
    __table_args__ = (
        # the requests too: which hours changed, read per query (analytics.hour_cache)
        Index("ix_telemetry_rollups_hourly_org_hour", "org_id", "hour", "requests"),
        Index("ix_telemetry_rollups_hourly_covering", "org_id", "hour", *COVERED),
    )

    hour: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)


#: a sketch's measure, as ``telemetry_sketches_hourly.measure`` names it → its column in a
#: minute's row
MEASURES = {
    "latency": "latency_sketch",
    "upstream": "upstream_sketch",
    "request": "request_sketch",
    "response": "response_sketch",
    "transfer": "transfer_sketch",
}


#: PostgreSQL partitions of ``telemetry_sketches_hourly`` (one per measure, made by migration
#: 0012): tables of the database that no model names, which schema comparison must skip
SKETCH_PARTITIONS = frozenset(f"telemetry_sketches_hourly_{measure}" for measure in MEASURES)


class SketchValues:
    """The columns after the key that both sketch tables share: the names a query shows
    (as they were when the traffic was recorded) and the sketch. A mixin's columns follow
    the class's own, so each table keeps its primary key first and in its order."""

    env_name: Mapped[str] = mapped_column(Text(), server_default="")
    api_name: Mapped[str] = mapped_column(Text(), server_default="")
    route_name: Mapped[str] = mapped_column(Text(), server_default="")
    api_path: Mapped[str] = mapped_column(Text(), server_default="")
    upstream_path: Mapped[str] = mapped_column(Text(), server_default="")
    app_name: Mapped[str] = mapped_column(Text(), server_default="")
    developer_email: Mapped[str] = mapped_column(Text(), server_default="")
    product_name: Mapped[str] = mapped_column(Text(), server_default="")
    #: the values the sketch holds
    count: Mapped[int] = mapped_column(BigInteger, default=0)
    sketch: Mapped[str] = mapped_column(Text(), default="")


class TelemetryHourlySketch(SketchValues, Base):
    """One measure's sketch of one hourly key, with the names and ids a query filters and
    groups by. Keyed (org, measure, hour, ...) and, on SQLite, without a rowid: the rows a
    percentile query reads are one range of the primary key, in order."""

    __tablename__ = "telemetry_sketches_hourly"
    __table_args__ = (
        Index("ix_telemetry_sketches_hourly_env_hour", "environment_id", "hour"),
        # measure by measure apart: on SQLite ordered by the key, on PostgreSQL one
        # partition per measure (made by migration 0012)
        {"sqlite_with_rowid": False, "postgresql_partition_by": "LIST (measure)"},
    )

    org_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("orgs.id", ondelete="CASCADE"), primary_key=True
    )
    measure: Mapped[str] = mapped_column(String(16), primary_key=True)
    hour: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)
    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    api_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    route_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    consumer: Mapped[str] = mapped_column(String(128), primary_key=True)
    method: Mapped[str] = mapped_column(String(16), primary_key=True)
    status: Mapped[int] = mapped_column(Integer, primary_key=True)
    app_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    product_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    developer_id: Mapped[str] = mapped_column(String(64), primary_key=True)


#: the hourly key without what a percentile query seldom splits by (consumer, method, status):
#: the key of ``telemetry_sketches_hourly_by_route``
ROUTE_KEY = ("api_id", "route_id", "app_id", "product_id", "developer_id")


class TelemetryRouteSketch(SketchValues, Base):
    """One measure's hourly sketches merged per environment, route and app: what
    ``telemetry_sketches_hourly`` holds, without consumer, method and status, so about a
    sixth of its rows (``bench/bench_analytics.py``). Written by the compaction
    (``portico.management.analytics.compaction``) once an hour has closed, and read in its
    place by a query that neither groups nor filters by those three while the hour is as it
    was compacted (``TelemetrySketchCompaction``). Rows of one key whose names differed
    within the hour (an API renamed at half past) stay apart, numbered by ``variant``: a
    query grouping by a name sees what it would have seen in the finer table."""

    __tablename__ = "telemetry_sketches_hourly_by_route"
    __table_args__ = (
        Index("ix_telemetry_sketches_hourly_by_route_env_hour", "environment_id", "hour"),
        {"sqlite_with_rowid": False},
    )

    org_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("orgs.id", ondelete="CASCADE"), primary_key=True
    )
    measure: Mapped[str] = mapped_column(String(16), primary_key=True)
    hour: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)
    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    api_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    route_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    app_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    product_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    developer_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    variant: Mapped[int] = mapped_column(Integer, primary_key=True)


class TelemetrySketchCompaction(Base):
    """An hour of an org compacted into ``telemetry_sketches_hourly_by_route``, and the
    hour's fingerprint then: (rows, requests) of its hourly rollups. Any write to the hour
    changes the fingerprint, and the compacted rows are not read until compacted again."""

    __tablename__ = "telemetry_sketch_compactions"

    org_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("orgs.id", ondelete="CASCADE"), primary_key=True
    )
    hour: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)
    rows: Mapped[int] = mapped_column(BigInteger)
    requests: Mapped[int] = mapped_column(BigInteger)
    compacted_at: Mapped[datetime] = mapped_column(UTCDateTime())


class TelemetryLoss(Base):
    """Records a node could not deliver (its buffer was full), by the minute it said so."""

    __tablename__ = "telemetry_loss"

    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    minute: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)
    node_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"))
    dropped: Mapped[int] = mapped_column(BigInteger, default=0)
