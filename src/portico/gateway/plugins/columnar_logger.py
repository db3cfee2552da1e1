"""columnar-logger: log rows inserted into a ClickHouse table over its HTTP interface."""

from __future__ import annotations

from pydantic import Field

from portico.gateway.plugins._batching import BatchingConfig
from portico.gateway.plugins.base import Category, HttpUrl, PluginSpec

# database and table are interpolated into the INSERT statement at run time (ClickHouse's
# HTTP interface takes the SQL text): only plain identifiers, so nothing can be injected
IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"


class ColumnarLoggerConfig(BatchingConfig):
    endpoint_addr: HttpUrl = Field(
        description="ClickHouse's HTTP interface, e.g. http://clickhouse:8123."
    )
    database: str = Field(
        pattern=IDENTIFIER,
        description="Database of the log table (a plain identifier: it is written into the "
        "INSERT statement).",
    )
    logtable: str = Field(
        pattern=IDENTIFIER,
        description="Table the rows are inserted into (a plain identifier: it is written into "
        "the INSERT statement).",
    )
    user: str = Field("default", min_length=1, max_length=128, description="ClickHouse user.")
    password: str | None = Field(
        None, min_length=1, max_length=1024, description="Password of the ClickHouse user."
    )
    timeout: int = Field(3, ge=1, le=60, description="Seconds to wait for ClickHouse.")

    secret_fields = frozenset({"password"})


PLUGIN = PluginSpec(
    name="columnar-logger",
    category=Category.OBSERVABILITY,
    order=952,
    reorderable=True,
    config=ColumnarLoggerConfig,
    description="Inserts log rows into a ClickHouse table over its HTTP interface.",
)
