"""columnar-logger, aggregator-logger and search-logger at run time: real requests through a
Gateway on loopback, their entries read back from the log store each writes to.

ClickHouse, Loki and Elasticsearch/OpenSearch do not install from the registries this project
uses, so the stores are ``tests.support.logsinks``' servers speaking their HTTP APIs
(ClickHouse's HTTP interface, Loki's push API, Elasticsearch's ``_bulk``): they parse and
refuse requests as the real ones do and keep what they accepted. The batch processor behind
every logger is tested with http-logger (test_observability_runtime.py); what is tested here
is each logger's wire format, its failure detection, and that a dead store costs no request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from portico.gateway.node_options import GatewayOptions
from portico.gateway.plugins.columnar_logger import insert_statement
from portico.gateway.plugins.search_logger import bulk_refusal
from tests.gateway.plugins.test_observability_runtime import (
    ALICE_KEY,
    REDACTED,
    Running,
    _start,
    _stop,
    environment,
    key_auth,
    until_metric,
)
from tests.gateway.test_pipeline import plugin
from tests.support.logsinks import BulkSearch, ClickHouseHttp, LokiPush, serving
from tests.support.waiting import eventually

FAST = {"batch_max_size": 1, "inactive_timeout": 1, "max_retry_count": 0, "retry_delay": 0}


@pytest.fixture
async def gateway() -> AsyncIterator[Running]:
    running, servers = await _start(GatewayOptions(node_id="node-1", egress_allow=("127.0.0.0/8",)))
    yield running
    await _stop(running, servers)


@pytest.fixture(scope="module")
def clickhouse() -> Iterator[ClickHouseHttp]:
    sink = ClickHouseHttp(user="logger", password="ch-secret", tables={("logs", "access")})
    with serving(sink):
        yield sink


@pytest.fixture(scope="module")
def loki() -> Iterator[LokiPush]:
    with serving(LokiPush()) as sink:
        yield sink


@pytest.fixture(scope="module")
def loki_replica() -> Iterator[LokiPush]:
    with serving(LokiPush()) as sink:
        yield sink


@pytest.fixture(scope="module")
def search() -> Iterator[BulkSearch]:
    with serving(BulkSearch(user="elastic", password="es-secret")) as sink:
        yield sink


@pytest.fixture(autouse=True)
def _fresh_sinks(request: pytest.FixtureRequest) -> None:
    for name in ("clickhouse", "loki", "loki_replica", "search"):
        if name in request.fixturenames:
            request.getfixturevalue(name).reset()


def columnar(sink: ClickHouseHttp, **config: Any) -> dict[str, Any]:
    base = {
        "endpoint_addr": sink.url(),
        "database": "logs",
        "logtable": "access",
        "user": "logger",
        "password": "ch-secret",
        **FAST,
    }
    return plugin("columnar-logger", 952, **{**base, **config})


def aggregator(*sinks: LokiPush, **config: Any) -> dict[str, Any]:
    base = {
        "endpoint_addrs": [sink.url() for sink in sinks],
        "tenant_id": "team-a",
        "log_labels": {"job": "portico", "env": "test"},
        **FAST,
    }
    return plugin("aggregator-logger", 953, **{**base, **config})


def searching(sink: BulkSearch, **config: Any) -> dict[str, Any]:
    base = {
        "endpoint_addr": sink.url(),
        "field": {"index": "portico-logs"},
        "auth": {"username": "elastic", "password": "es-secret"},
        **FAST,
    }
    return plugin("search-logger", 954, **{**base, **config})


async def call_as_alice(gateway: Running, path: str) -> str:
    """A request with credentials to redact; its request id."""
    response = await gateway.client.get(
        f"{path}?apikey={ALICE_KEY}", headers={"apikey": ALICE_KEY, "cookie": "s=cookie-secret"}
    )
    assert response.status_code == 200
    return response.headers["x-request-id"]


def assert_entry(entry: dict[str, Any], request_id: str, path: str) -> None:
    assert entry["request_id"] == request_id
    assert entry["request"]["method"] == "GET"
    assert entry["request"]["uri"] == f"{path}?apikey={REDACTED}"
    assert entry["request"]["headers"]["apikey"] == REDACTED
    assert entry["request"]["headers"]["cookie"] == REDACTED
    assert entry["response"]["status"] == 200
    assert entry["route_name"] == "orders"
    assert entry["consumer"] == {"username": "alice"}
    assert ALICE_KEY not in json.dumps(entry)


DROPPED = "portico_log_entries_dropped_total"


# ---------------------------------------------------------------------- columnar-logger


async def test_columnar_logger_inserts_each_batch_as_json_rows(
    gateway: Running, backend: int, clickhouse: ClickHouseHttp
) -> None:
    logger = columnar(clickhouse, batch_max_size=2, inactive_timeout=3600)
    await gateway.gw.apply(environment(backend, [key_auth(), logger], with_alice=True))
    ids = [await call_as_alice(gateway, f"/orders/{n}") for n in range(2)]
    await eventually(lambda: len(clickhouse.rows.get(("logs", "access"), [])) == 2)
    assert clickhouse.requests == 1  # one INSERT for the batch
    rows = clickhouse.rows[("logs", "access")]
    for n, (row, request_id) in enumerate(zip(rows, ids, strict=True)):
        assert_entry(row, request_id, f"/orders/{n}")
    assert clickhouse.settings == [{"input_format_skip_unknown_fields": "1"}]


def test_the_insert_quotes_its_identifiers() -> None:
    assert insert_statement("logs", "select") == "INSERT INTO `logs`.`select` FORMAT JSONEachRow"


async def test_columnar_logger_refused_credentials_drop_and_count(
    gateway: Running, backend: int, clickhouse: ClickHouseHttp
) -> None:
    logger = columnar(clickhouse, password="wrong-password", max_retry_count=1)
    await gateway.gw.apply(environment(backend, [logger]))
    assert (await gateway.client.get("/x")).status_code == 200
    await until_metric(gateway, DROPPED, {"plugin": "columnar-logger"}, 1)
    assert clickhouse.requests == 2  # the first try and one retry
    assert clickhouse.rows == {}


# ---------------------------------------------------------------------- aggregator-logger


async def test_aggregator_logger_pushes_to_each_loki_with_the_tenant(
    gateway: Running, backend: int, loki: LokiPush, loki_replica: LokiPush
) -> None:
    logger = aggregator(loki, loki_replica)
    await gateway.gw.apply(environment(backend, [key_auth(), logger], with_alice=True))
    request_id = await call_as_alice(gateway, "/orders/1")
    for sink in (loki, loki_replica):
        await eventually(lambda sink=sink: len(sink.lines.get("team-a", [])) == 1)  # type: ignore[misc]
        [(labels, stamp, line)] = sink.lines["team-a"]
        assert labels == {"job": "portico", "env": "test"}
        assert stamp > 1_000_000_000 * 1_000_000_000  # nanoseconds since the epoch
        assert_entry(json.loads(line), request_id, "/orders/1")


async def test_aggregator_logger_retries_only_the_loki_that_failed(
    gateway: Running, backend: int, loki: LokiPush, loki_replica: LokiPush
) -> None:
    loki_replica.status = 500
    logger = aggregator(loki, loki_replica, max_retry_count=2)
    await gateway.gw.apply(environment(backend, [logger]))
    assert (await gateway.client.get("/x")).status_code == 200
    await until_metric(gateway, DROPPED, {"plugin": "aggregator-logger"}, 1)
    assert loki_replica.requests == 3  # the first try and two retries
    assert loki.requests == 1  # it took the batch the first time: no duplicate lines
    assert len(loki.lines["team-a"]) == 1


# ---------------------------------------------------------------------- search-logger


async def test_search_logger_bulk_indexes_into_the_configured_index(
    gateway: Running, backend: int, search: BulkSearch
) -> None:
    logger = searching(search, batch_max_size=3, inactive_timeout=3600)
    await gateway.gw.apply(environment(backend, [key_auth(), logger], with_alice=True))
    ids = [await call_as_alice(gateway, f"/orders/{n}") for n in range(3)]
    await eventually(lambda: len(search.documents.get("portico-logs", [])) == 3)
    assert search.requests == 1
    assert search.actions == ["create"] * 3
    for n, (document, request_id) in enumerate(
        zip(search.documents["portico-logs"], ids, strict=True)
    ):
        assert_entry(document, request_id, f"/orders/{n}")


async def test_search_logger_partial_failure_is_a_failed_send(
    gateway: Running, backend: int, search: BulkSearch
) -> None:
    search.refuse = 1_000  # every document refused, the answers 200 with "errors": true
    await gateway.gw.apply(environment(backend, [searching(search, max_retry_count=1)]))
    assert (await gateway.client.get("/x")).status_code == 200
    await until_metric(gateway, DROPPED, {"plugin": "search-logger"}, 1)
    assert search.requests == 2


def test_a_bulk_answer_names_the_refused_documents() -> None:
    answer = {
        "errors": True,
        "items": [
            {"create": {"status": 201}},
            {"create": {"status": 400, "error": {"type": "mapper_parsing_exception"}}},
        ],
    }
    assert bulk_refusal(json.dumps(answer).encode()) == (
        "1 document(s) refused by _bulk (first: mapper_parsing_exception)"
    )
    assert bulk_refusal(b'{"errors": false, "items": []}') is None
    assert bulk_refusal(b"<html>") == "the _bulk answer is not JSON"


# ---------------------------------------------------------------------- a store that is down


@pytest.mark.parametrize("name", ["columnar-logger", "aggregator-logger", "search-logger"])
async def test_a_store_that_is_down_costs_no_request(
    gateway: Running, backend: int, name: str
) -> None:
    with serving(BulkSearch()) as gone:  # a port that was open once, then nothing listens
        pass
    down = {
        "columnar-logger": lambda: columnar(ClickHouseHttp(port=gone.port)),
        "aggregator-logger": lambda: aggregator(LokiPush(port=gone.port)),
        "search-logger": lambda: searching(BulkSearch(port=gone.port)),
    }[name]()
    await gateway.gw.apply(environment(backend, [down]))
    for n in range(3):
        assert (await gateway.client.get(f"/n/{n}")).status_code == 200
    await until_metric(gateway, DROPPED, {"plugin": name}, 3)
