"""hourly sketches in their own table, one row per key and measure, in 16-bit fields

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24 20:30:00.000000

A percentile query over a day read every hourly row whole (five sketches of a few hundred
bins each: wider than a page, so a page lookup or two per row) to use one sketch of it. The
sketches move to ``telemetry_sketches_hourly``, keyed (org, measure, hour, ...): one measure's
rows of a day are one range of the key. They are rewritten in the packed form of this
revision (``low:count:hex``, 16-bit little-endian fields; sparse when a bin exceeds 65,535).
"""

import sys
from array import array
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

import portico.core.db.types

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_KEY = (
    "api_id",
    "route_id",
    "consumer",
    "method",
    "status",
    "app_id",
    "product_id",
    "developer_id",
)
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
#: measure → (its column in revision 0011's hourly rows, the count of values it holds)
_MEASURES = {
    "latency": ("latency_sketch", "requests"),
    "upstream": ("upstream_sketch", "upstream_requests"),
    "request": ("request_sketch", "requests"),
    "response": ("response_sketch", "requests"),
    "transfer": ("transfer_sketch", "requests"),
}
_NARROW_LIMIT = (1 << 16) - 1
_BATCH = 5000


def _decode(text: str) -> dict[int, int]:
    """Either stored form of revision 0010: sparse ``i=c,...`` or packed ``low:hex`` (32-bit
    fields, bin ``low`` in the lowest bits)."""
    out: dict[int, int] = {}
    if not text:
        return out
    if ":" in text:
        low_text, _, digits = text.partition(":")
        number = int(digits, 16)
        for offset in range((number.bit_length() + 31) // 32):
            count = (number >> (32 * offset)) & 0xFFFFFFFF
            if count:
                out[int(low_text) + offset] = count
        return out
    for item in text.split(","):
        index, _, count = item.partition("=")
        out[int(index)] = out.get(int(index), 0) + int(count)
    return out


def _encode(bins: dict[int, int]) -> str:
    """The hourly form of this revision (``portico.management.analytics.sketch.encode`` as
    of it, packed): 16-bit fields, sparse only when a bin would overflow one."""
    used = sorted((i, c) for i, c in bins.items() if c)
    if not used:
        return ""
    low, high = used[0][0], used[-1][0]
    low -= low % 8  # starts aligned, so that a query adds up fewer sums
    total = sum(c for _, c in used)
    if max(c for _, c in used) <= _NARROW_LIMIT:
        fields = array("H", bytes(2 * (high - low + 1)))
        for index, count in used:
            fields[index - low] = count
        if sys.byteorder == "big":
            fields.byteswap()
        return f"{low}:{total}:{fields.tobytes().hex()}"
    return ",".join(f"{i}={c}" for i, c in used)


def _sketch_table() -> sa.Table:
    return op.create_table(
        "telemetry_sketches_hourly",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("measure", sa.String(length=16), nullable=False),
        sa.Column("hour", portico.core.db.types.UTCDateTime(), nullable=False),
        sa.Column("environment_id", sa.Uuid(), nullable=False),
        sa.Column("api_id", sa.String(length=64), nullable=False),
        sa.Column("route_id", sa.String(length=128), nullable=False),
        sa.Column("consumer", sa.String(length=128), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("app_id", sa.String(length=64), nullable=False),
        sa.Column("product_id", sa.String(length=64), nullable=False),
        sa.Column("developer_id", sa.String(length=64), nullable=False),
        *(sa.Column(name, sa.Text(), server_default="", nullable=False) for name in _NAMES),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.Column("sketch", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_telemetry_sketches_hourly_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["orgs.id"],
            name=op.f("fk_telemetry_sketches_hourly_org_id_orgs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "org_id",
            "measure",
            "hour",
            "environment_id",
            *_KEY,
            name=op.f("pk_telemetry_sketches_hourly"),
        ),
        sqlite_with_rowid=False,
        postgresql_partition_by="LIST (measure)",
    )


def _partitions() -> None:
    """PostgreSQL keeps rows where they were written, the five measures of an hour side by
    side: a query reading one measure would read five times the pages. One partition per
    measure keeps each apart (SQLite's table is ordered by its key, measure second)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    for measure in _MEASURES:
        op.execute(
            f"CREATE TABLE telemetry_sketches_hourly_{measure} "
            f"PARTITION OF telemetry_sketches_hourly FOR VALUES IN ('{measure}')"
        )


def _hourly(*columns: str) -> sa.TableClause:
    return sa.table(
        "telemetry_rollups_hourly",
        sa.column("org_id", sa.Uuid()),
        sa.column("environment_id", sa.Uuid()),
        sa.column("hour", portico.core.db.types.UTCDateTime()),
        *(sa.column(name) for name in columns),
    )


def upgrade() -> None:
    sketches = _sketch_table()
    _partitions()
    op.create_index(
        "ix_telemetry_sketches_hourly_env_hour",
        "telemetry_sketches_hourly",
        ["environment_id", "hour"],
        unique=False,
    )
    bind = op.get_bind()
    columns = (*_KEY, *_NAMES, "requests", "upstream_requests")
    hourly = _hourly(*columns, *(column for column, _ in _MEASURES.values()))
    rows: list[dict[str, Any]] = []
    for row in bind.execute(sa.select(hourly)).mappings():
        shared = {name: row[name] for name in ("org_id", "environment_id", "hour", *_KEY)}
        shared.update({name: row[name] for name in _NAMES})
        for measure, (column, counted_by) in _MEASURES.items():
            text = _encode(_decode(row[column] or ""))
            rows.append({**shared, "measure": measure, "count": row[counted_by], "sketch": text})
        if len(rows) >= _BATCH:
            op.bulk_insert(sketches, rows)
            rows = []
    if rows:
        op.bulk_insert(sketches, rows)
    with op.batch_alter_table("telemetry_rollups_hourly", schema=None) as batch_op:
        for column, _ in _MEASURES.values():
            batch_op.drop_column(column)
        # (org, hour) with the requests: what a percentile query reads first to know which
        # hours changed since it last merged them (analytics.hour_cache)
        batch_op.drop_index("ix_telemetry_rollups_hourly_org_hour")
        batch_op.create_index(
            "ix_telemetry_rollups_hourly_org_hour", ["org_id", "hour", "requests"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("telemetry_rollups_hourly", schema=None) as batch_op:
        batch_op.drop_index("ix_telemetry_rollups_hourly_org_hour")
        batch_op.create_index("ix_telemetry_rollups_hourly_org_hour", ["org_id", "hour"])
        for column, _ in _MEASURES.values():
            batch_op.add_column(sa.Column(column, sa.Text(), server_default="", nullable=False))
    bind = op.get_bind()
    stored = sa.table(
        "telemetry_sketches_hourly",
        sa.column("measure"),
        sa.column("environment_id", sa.Uuid()),
        sa.column("hour", portico.core.db.types.UTCDateTime()),
        sa.column("sketch"),
        *(sa.column(name) for name in _KEY),
    )
    hourly = _hourly(*_KEY, *(column for column, _ in _MEASURES.values()))
    for row in bind.execute(sa.select(stored)).mappings().all():
        bins = _decode_current(row["sketch"])
        number = 0
        low = min(bins) if bins else 0
        for index, count in bins.items():
            number |= count << ((index - low) * 32)
        text = f"{low}:{number:x}" if bins else ""
        bind.execute(
            hourly.update()
            .where(
                hourly.c.environment_id == row["environment_id"],
                hourly.c.hour == row["hour"],
                *(hourly.c[name] == row[name] for name in _KEY),
            )
            .values({_MEASURES[row["measure"]][0]: text})
        )
    op.drop_index("ix_telemetry_sketches_hourly_env_hour", table_name="telemetry_sketches_hourly")
    op.drop_table("telemetry_sketches_hourly")


def _decode_current(text: str) -> dict[int, int]:
    if text.count(":") != 2:
        return _decode(text)
    low_text, _, digits = text.split(":")
    fields = array("H", bytes.fromhex(digits))
    if sys.byteorder == "big":
        fields.byteswap()
    return {int(low_text) + offset: count for offset, count in enumerate(fields) if count}
