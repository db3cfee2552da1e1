"""stream-logger, columnar-logger, aggregator-logger and search-logger: every request logged,
batches of 1000 sent to a server speaking the store's protocol, on loopback. (http-logger's
case is http_logger.py.)

The three HTTP stores (ClickHouse's HTTP interface, Loki's push API, Elasticsearch's
``_bulk``) are nginx answering as each does to an accepted batch (ClickHouse 200 and no body,
Loki 204, ``_bulk`` 200 with ``"errors": false``), not the servers of the loggers' tests
(tests/support/logsinks.py): those parse and keep every entry in Python, and on this 2-core
machine their CPU, taken beside the gateway's, was part of the figure. What the loggers send
is checked there, by the tests; here each line ends with the gateway's count of dropped
entries (0: every batch was answered 2xx) and the batches nginx took. Kafka has no such
stand-in: the broker of the tests (tests/support/kafkabroker.py, Kafka's wire protocol in
Python) runs beside the gateway, told not to read the records (``decode=False``: it counts
them from their batches' headers), and its CPU with it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_plugins import Case, Setup, nginx_sink

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: tests.support

from tests.support.kafkabroker import KafkaBroker

BATCH = {"batch_max_size": 1000}
CLICKHOUSE_ANSWER = "return 200;"
LOKI_ANSWER = "return 204;"
BULK_ANSWER = (
    """default_type application/json; return 200 '{"took":1,"errors":false,"items":[]}';"""
)


def _attach(name: str, order: int, config: dict[str, Any]) -> Setup:
    plugin = {"name": name, "scope": "route", "order": order, "config": {**config, **BATCH}}
    return Setup(attach=[plugin], logs=True)


@contextlib.contextmanager
def _kafka(work: Path) -> Iterator[Setup]:
    with KafkaBroker(decode=False) as broker:
        config = {"broker_list": {"127.0.0.1": broker.port}, "stream_topic": "portico-access"}
        yield _attach("stream-logger", 951, config)


def _with(setup: Setup, attached: Setup) -> Setup:
    setup.attach = attached.attach
    return setup


@contextlib.contextmanager
def _clickhouse(work: Path) -> Iterator[Setup]:
    with nginx_sink(work, "clickhouse", CLICKHOUSE_ANSWER) as (url, setup):
        config = {"endpoint_addr": url, "database": "logs", "logtable": "access"}
        yield _with(setup, _attach("columnar-logger", 952, config))


@contextlib.contextmanager
def _loki(work: Path) -> Iterator[Setup]:
    with nginx_sink(work, "loki", LOKI_ANSWER) as (url, setup):
        yield _with(setup, _attach("aggregator-logger", 953, {"endpoint_addrs": [url]}))


@contextlib.contextmanager
def _search(work: Path) -> Iterator[Setup]:
    with nginx_sink(work, "search", BULK_ANSWER) as (url, setup):
        config = {"endpoint_addr": url, "field": {"index": "portico-logs"}}
        yield _with(setup, _attach("search-logger", 954, config))


CASES = [
    Case("stream-logger", 0.9, _kafka),
    Case("columnar-logger", 0.9, _clickhouse),
    Case("aggregator-logger", 0.9, _loki),
    Case("search-logger", 0.9, _search),
]
