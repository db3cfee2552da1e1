"""analytics: rollups keyed by app, product and developer, with names, extremes and
percentile sketches; an hourly tier; widgets

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 15:41:55.072860

Existing minute rows keep their counters; their 12-bucket latency histogram becomes a
latency sketch (each bucket's requests at its upper bound), their sizes and upstream
latency become sketches at their averages, and the hourly tier is filled from them.
"""

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import portico.core.db.types

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BUCKETS = tuple(f"latency_b{index:02d}" for index in range(12))
_BOUNDS_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 20000)
_NEW_KEY = ("app_id", "product_id", "developer_id")
_NAMES = (
    "env_name",
    "api_name",
    "route_name",
    "api_path",
    "upstream_path",
    "app_name",
    "developer_email",
    "product_name",
)
_EXTREMES_FLOAT = ("latency_ms_min", "upstream_ms_min", "upstream_ms_max")
_EXTREMES_INT = (
    "request_bytes_min",
    "request_bytes_max",
    "response_bytes_min",
    "response_bytes_max",
    "transfer_bytes_min",
    "transfer_bytes_max",
)
_SKETCHES = (
    "latency_sketch",
    "upstream_sketch",
    "request_sketch",
    "response_sketch",
    "transfer_sketch",
)
#: the hourly tier's covering index (see portico.management.telemetry.models.COVERED)
_COVERED = (
    "environment_id",
    "api_id",
    *_NAMES,
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
_OLD_KEY = ("environment_id", "minute", "api_id", "route_id", "consumer", "method", "status")
_KEY = (*_OLD_KEY, *_NEW_KEY)


def _added_columns() -> list[sa.Column[Any]]:
    columns: list[sa.Column[Any]] = [
        sa.Column(name, sa.String(length=64), server_default="", nullable=False)
        for name in _NEW_KEY
    ]
    columns += [sa.Column(name, sa.Text(), server_default="", nullable=False) for name in _NAMES]
    columns += [
        sa.Column(name, sa.Float(), server_default="0", nullable=False) for name in _EXTREMES_FLOAT
    ]
    columns += [
        sa.Column(name, sa.BigInteger(), server_default="0", nullable=False)
        for name in _EXTREMES_INT
    ]
    columns += [sa.Column(name, sa.Text(), server_default="", nullable=False) for name in _SKETCHES]
    return columns


# the sketch mapping of portico.gateway.telemetry (1 % relative accuracy), as of this revision
_INV_LN_GAMMA = 1.0 / math.log(1.01 / 0.99)


def _index(value: float) -> int:
    if value < 0.001:
        return 0
    return min(math.ceil(math.log(value) * _INV_LN_GAMMA) + 347, 1730)


def _sparse(bins: dict[int, int]) -> str:
    return ",".join(f"{i}={c}" for i, c in sorted(bins.items()) if c)


def _packed(bins: dict[int, int]) -> str:
    used = {i: c for i, c in bins.items() if c}
    if not used:
        return ""
    low = min(used)
    number = 0
    for index, count in used.items():
        number |= count << ((index - low) * 32)
    return f"{low}:{number:x}"


def _convert_minutes() -> list[dict[str, Any]]:
    """Give existing minute rows their sketches and extremes; their hourly rows."""
    bind = op.get_bind()
    table = sa.table(
        "telemetry_rollups",
        sa.column("environment_id", sa.Uuid()),
        sa.column("minute", portico.core.db.types.UTCDateTime()),
        sa.column("org_id", sa.Uuid()),
        *(sa.column(name) for name in (*_KEY[2:], *_BUCKETS)),
        *(sa.column(name) for name in ("requests", "latency_ms_sum", "latency_ms_max")),
        *(sa.column(name) for name in ("upstream_requests", "upstream_ms_sum")),
        *(sa.column(name) for name in ("request_bytes", "response_bytes")),
        *(sa.column(name) for name in (*_EXTREMES_FLOAT, *_EXTREMES_INT, *_SKETCHES)),
    )
    hours: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in bind.execute(sa.select(table)).mappings().all():
        requests = int(row["requests"])
        upstream = int(row["upstream_requests"])
        request_average = int(row["request_bytes"]) // max(requests, 1)
        response_average = int(row["response_bytes"]) // max(requests, 1)
        upstream_average = float(row["upstream_ms_sum"]) / max(upstream, 1)
        latency: dict[int, int] = {}
        for name, bound in zip(_BUCKETS, _BOUNDS_MS, strict=True):
            if row[name]:
                latency[_index(bound)] = latency.get(_index(bound), 0) + int(row[name])
        values: dict[str, Any] = {
            "latency_ms_min": float(row["latency_ms_sum"]) / max(requests, 1),
            "upstream_ms_min": upstream_average,
            "upstream_ms_max": upstream_average,
            "request_bytes_min": request_average,
            "request_bytes_max": request_average,
            "response_bytes_min": response_average,
            "response_bytes_max": response_average,
            "transfer_bytes_min": request_average + response_average,
            "transfer_bytes_max": request_average + response_average,
        }
        bins = {
            "latency_sketch": latency,
            "upstream_sketch": {_index(upstream_average): upstream} if upstream else {},
            "request_sketch": {_index(request_average): requests},
            "response_sketch": {_index(response_average): requests},
            "transfer_sketch": {_index(request_average + response_average): requests},
        }
        bind.execute(
            table.update()
            .where(*(table.c[name] == row[name] for name in _OLD_KEY))
            .values(**values, **{name: _sparse(b) for name, b in bins.items()})
        )
        minute: datetime = row["minute"]
        hour = minute.replace(minute=0, second=0, microsecond=0)
        key = (row["environment_id"], hour, *(row[name] for name in _OLD_KEY[2:]))
        known = hours.get(key)
        if known is None:
            hours[key] = {
                **{name: row[name] for name in _OLD_KEY},
                "hour": hour,
                "org_id": row["org_id"],
                **{name: row[name] for name in ("requests", "latency_ms_sum")},
                **{name: row[name] for name in ("upstream_requests", "upstream_ms_sum")},
                **{name: row[name] for name in ("request_bytes", "response_bytes")},
                "latency_ms_max": row["latency_ms_max"],
                **values,
                "bins": bins,
            }
            del hours[key]["minute"]
            continue
        for name in ("requests", "latency_ms_sum", "upstream_requests", "upstream_ms_sum"):
            known[name] += row[name]
        for name in ("request_bytes", "response_bytes"):
            known[name] += row[name]
        known["latency_ms_max"] = max(known["latency_ms_max"], row["latency_ms_max"])
        for name, value in values.items():
            known[name] = (
                min(known[name], value) if name.endswith("_min") else max(known[name], value)
            )
        for name, extra in bins.items():
            for index, count in extra.items():
                known["bins"][name][index] = known["bins"][name].get(index, 0) + count
    out = []
    for row in hours.values():
        bins = row.pop("bins")
        row.update({name: _packed(b) for name, b in bins.items()})
        out.append(row)
    return out


def upgrade() -> None:
    op.create_table(
        "widgets",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False),
        sa.Column("aggregation", sa.String(length=16), nullable=False),
        sa.Column(
            "dimensions",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("chart", sa.String(length=16), nullable=False),
        sa.Column(
            "filters",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"], ["orgs.id"], name=op.f("fk_widgets_org_id_orgs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_widgets")),
    )
    with op.batch_alter_table("widgets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_widgets_org_id"), ["org_id"], unique=False)

    hourly = op.create_table(
        "telemetry_rollups_hourly",
        sa.Column("hour", portico.core.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("environment_id", sa.Uuid(), nullable=False),
        sa.Column("api_id", sa.String(length=64), nullable=False),
        sa.Column("route_id", sa.String(length=128), nullable=False),
        sa.Column("consumer", sa.String(length=128), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("requests", sa.BigInteger(), nullable=False),
        sa.Column("latency_ms_sum", sa.Float(), nullable=False),
        sa.Column("latency_ms_max", sa.Float(), nullable=False),
        sa.Column("upstream_requests", sa.BigInteger(), nullable=False),
        sa.Column("upstream_ms_sum", sa.Float(), nullable=False),
        sa.Column("request_bytes", sa.BigInteger(), nullable=False),
        sa.Column("response_bytes", sa.BigInteger(), nullable=False),
        *_added_columns(),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_telemetry_rollups_hourly_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["orgs.id"],
            name=op.f("fk_telemetry_rollups_hourly_org_id_orgs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "hour",
            *(name for name in _KEY if name != "minute"),
            name=op.f("pk_telemetry_rollups_hourly"),
        ),
    )
    with op.batch_alter_table("telemetry_rollups_hourly", schema=None) as batch_op:
        batch_op.create_index(
            "ix_telemetry_rollups_hourly_org_hour", ["org_id", "hour"], unique=False
        )
        batch_op.create_index(
            "ix_telemetry_rollups_hourly_covering", ["org_id", "hour", *_COVERED], unique=False
        )

    with op.batch_alter_table("telemetry_rollups", schema=None) as batch_op:
        for column in _added_columns():
            batch_op.add_column(column)
    rows = _convert_minutes()
    if rows:
        op.bulk_insert(hourly, rows)
    # the primary key grows by app, product and developer; the histogram columns go
    with op.batch_alter_table("telemetry_rollups", schema=None, recreate="always") as batch_op:
        for name in _BUCKETS:
            batch_op.drop_column(name)
        batch_op.drop_constraint("pk_telemetry_rollups", type_="primary")
        batch_op.create_primary_key("pk_telemetry_rollups", list(_KEY))


def downgrade() -> None:
    # minute rows that differ only by app, product or developer are added up again; their
    # sketches, names and extremes are dropped, the histogram comes back empty
    bind = op.get_bind()
    table = sa.table(
        "telemetry_rollups",
        sa.column("environment_id", sa.Uuid()),
        sa.column("minute", portico.core.db.types.UTCDateTime()),
        *(sa.column(n) for n in (*_KEY[2:], "requests")),
    )
    duplicates = bind.execute(
        sa.select(*(table.c[n] for n in _OLD_KEY))
        .group_by(*(table.c[n] for n in _OLD_KEY))
        .having(sa.func.count() > 1)
    ).all()
    for key in duplicates:
        where = [table.c[n] == v for n, v in zip(_OLD_KEY, key, strict=True)]
        bind.execute(table.delete().where(*where, table.c.app_id != ""))
    with op.batch_alter_table("telemetry_rollups", schema=None, recreate="always") as batch_op:
        for name in _BUCKETS:
            batch_op.add_column(
                sa.Column(name, sa.BigInteger(), server_default="0", nullable=False)
            )
        batch_op.drop_constraint("pk_telemetry_rollups", type_="primary")
        for column in _added_columns():
            batch_op.drop_column(column.name)
        batch_op.create_primary_key("pk_telemetry_rollups", list(_OLD_KEY))
    with op.batch_alter_table("telemetry_rollups_hourly", schema=None) as batch_op:
        batch_op.drop_index("ix_telemetry_rollups_hourly_covering")
        batch_op.drop_index("ix_telemetry_rollups_hourly_org_hour")
    op.drop_table("telemetry_rollups_hourly")
    with op.batch_alter_table("widgets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_widgets_org_id"))
    op.drop_table("widgets")
