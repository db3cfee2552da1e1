"""columnar-logger: log rows inserted into a ClickHouse table over its HTTP interface.

A batch is one ``INSERT INTO `<database>`.`<logtable>` FORMAT JSONEachRow`` (the statement in
the ``query`` parameter of a POST to ``endpoint_addr``, one entry per line in the body), the
user and password in ClickHouse's ``X-ClickHouse-User``/``X-ClickHouse-Key`` headers (never in
the URL, which proxies log). Fields the table has no column for are skipped
(``input_format_skip_unknown_fields``), so a table keeps just the columns it wants: a
``route_id String``, a ``request Tuple(...)``...
"""

from __future__ import annotations

import dataclasses

from pydantic import Field

from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins._batching import BatchingConfig
from portico.gateway.plugins._log_sink import EntryBatch, HttpPoster, LoggerRuntime, Sink
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


class ColumnarLoggerRuntime(LoggerRuntime):
    def __init__(self, config: ColumnarLoggerConfig, services: RuntimeServices) -> None:
        poster = HttpPoster(services)
        super().__init__(
            PLUGIN.name,
            config,
            services,
            _sink(config, poster),
            between=b"\n",  # JSONEachRow: a row a line
            close_grace=min(5.0, float(config.timeout)),
        )
        poster.shared(services, PLUGIN.name, config)


def insert_statement(database: str, table: str) -> str:
    """The INSERT of a batch. The names are plain identifiers (the config's pattern), quoted
    all the same: a name that is also a keyword stays a name."""
    return f"INSERT INTO `{database}`.`{table}` FORMAT JSONEachRow"


def _sink(config: ColumnarLoggerConfig, poster: HttpPoster) -> Sink:
    params = {
        "query": insert_statement(config.database, config.logtable),
        "input_format_skip_unknown_fields": "1",
    }
    headers = {"content-type": "application/x-ndjson", "x-clickhouse-user": config.user}
    if config.password is not None:
        headers["x-clickhouse-key"] = config.password
    timeout = float(config.timeout)

    async def send(batch: EntryBatch) -> None:
        body = (batch.view(), b"\n")  # rows written a line each; the last ended too
        await poster.post(config.endpoint_addr, body, headers, timeout, params=params)

    return send


PLUGIN = dataclasses.replace(PLUGIN, runtime=ColumnarLoggerRuntime)
