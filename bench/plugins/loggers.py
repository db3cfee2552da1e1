"""stream-logger, columnar-logger, aggregator-logger and search-logger: every request logged,
batches of 1000 written to the servers their tests use (tests/support: a broker speaking
Kafka's wire protocol, servers speaking ClickHouse's HTTP interface, Loki's push API and
Elasticsearch's _bulk), on loopback. (http-logger's case is http_logger.py.)"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_plugins import Case, Setup

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: tests.support

from tests.support.kafkabroker import KafkaBroker
from tests.support.logsinks import BulkSearch, ClickHouseHttp, LokiPush, serving

BATCH = {"batch_max_size": 1000}


def _attach(name: str, order: int, config: dict[str, Any]) -> Setup:
    return Setup(
        attach=[{"name": name, "scope": "route", "order": order, "config": {**config, **BATCH}}]
    )


@contextlib.contextmanager
def _kafka(work: Path) -> Iterator[Setup]:
    with KafkaBroker() as broker:
        config = {"broker_list": {"127.0.0.1": broker.port}, "stream_topic": "portico-access"}
        yield _attach("stream-logger", 951, config)


@contextlib.contextmanager
def _clickhouse(work: Path) -> Iterator[Setup]:
    with serving(ClickHouseHttp(tables={("logs", "access")})) as sink:
        config = {"endpoint_addr": sink.url(), "database": "logs", "logtable": "access"}
        yield _attach("columnar-logger", 952, config)


@contextlib.contextmanager
def _loki(work: Path) -> Iterator[Setup]:
    with serving(LokiPush()) as sink:
        yield _attach("aggregator-logger", 953, {"endpoint_addrs": [sink.url()]})


@contextlib.contextmanager
def _search(work: Path) -> Iterator[Setup]:
    with serving(BulkSearch()) as sink:
        config = {"endpoint_addr": sink.url(), "field": {"index": "portico-logs"}}
        yield _attach("search-logger", 954, config)


CASES = [
    Case("stream-logger", 0.9, _kafka),
    Case("columnar-logger", 0.9, _clickhouse),
    Case("aggregator-logger", 0.9, _loki),
    Case("search-logger", 0.9, _search),
]
