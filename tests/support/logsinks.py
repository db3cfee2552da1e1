"""Small servers speaking the HTTP APIs of three log stores, for the loggers' tests:
ClickHouse's HTTP interface (columnar-logger), Loki's push API (aggregator-logger) and
Elasticsearch's ``_bulk`` API (search-logger).

None of the real servers installs from the registries this project uses (ClickHouse, Loki and
Elasticsearch/OpenSearch are not Debian packages, nor on PyPI or npm), so each is replaced by
a server of the same wire format: it parses the requests as the real one does (the query
parameter and ``FORMAT``, the push JSON, the NDJSON action/document pairs), refuses what the
real one refuses (bad credentials, a missing tenant, a body not ended by a newline), and
stores what it accepted for the test to read back. Each can be told to fail: answer an error
``status`` (ClickHouse, Loki, Elasticsearch) or refuse some documents of a bulk request
while answering 200 (Elasticsearch's partial failure).

By hand (see by_hand.py), one of them serves until stopped and prints a line for each row,
log line or document it accepts:

    .venv/bin/python tests/support/logsinks.py --kind clickhouse --port 8123 [--table logs.access]
    .venv/bin/python tests/support/logsinks.py --kind loki --port 3100
    .venv/bin/python tests/support/logsinks.py --kind search --port 9200
"""

from __future__ import annotations

if __name__ == "__main__" and not __package__:  # run by its path: see by_hand.py
    from by_hand import run_as_module

    run_as_module(__file__)

import argparse
import base64
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from . import by_hand


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


@dataclass
class Sink:
    """What every server here shares: the address, the requests it got, a forced failure,
    and ``report``, given a line for each thing accepted (if set)."""

    port: int = 0
    #: answer every request with this status (0: behave)
    status: int = 0
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    host: str = "127.0.0.1"
    report: Callable[[str], None] | None = None

    def url(self, path: str = "") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def _reporting(self, lines: Iterator[str]) -> None:
        if self.report is not None:
            for line in lines:
                self.report(line)

    def reset(self) -> None:
        with self.lock:
            self.status = 0
            self.requests = 0
            self._clear()

    def _clear(self) -> None:
        raise NotImplementedError

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> tuple[int, bytes, str]:
        raise NotImplementedError


def _handler(sink: Sink) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            with sink.lock:
                sink.requests += 1
                if sink.status:
                    status, answer, kind = sink.status, b"forced failure", "text/plain"
                else:
                    status, answer, kind = sink.handle(self, body)
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            return

    return Handler


@contextmanager
def serving(sink: Sink) -> Iterator[Sink]:
    server = _Server((sink.host, sink.port), _handler(sink))
    sink.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield sink
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------- ClickHouse

_INSERT = re.compile(r"^INSERT INTO `?(\w+)`?\.`?(\w+)`? FORMAT (\w+)$")


@dataclass
class ClickHouseHttp(Sink):
    """ClickHouse's HTTP interface for INSERTs: ``POST /?query=INSERT INTO db.table FORMAT
    JSONEachRow`` with the rows in the body, the user in ``X-ClickHouse-User`` and the
    password in ``X-ClickHouse-Key``. Errors are ClickHouse's codes and texts."""

    user: str = "default"
    password: str = ""
    tables: set[tuple[str, str]] = field(default_factory=set)
    rows: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    settings: list[dict[str, str]] = field(default_factory=list)

    def _clear(self) -> None:
        self.rows.clear()
        self.settings.clear()

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> tuple[int, bytes, str]:
        user = handler.headers.get("x-clickhouse-user", "default")
        key = handler.headers.get("x-clickhouse-key", "")
        if (user, key) != (self.user, self.password):
            return _clickhouse_error(516, f"{user}: Authentication failed", status=403)
        params = {k: v[0] for k, v in parse_qs(urlsplit(handler.path).query).items()}
        found = _INSERT.match(params.get("query", ""))
        if found is None:
            return _clickhouse_error(62, "Syntax error", status=400)
        database, table, fmt = found.groups()
        if fmt != "JSONEachRow":
            return _clickhouse_error(73, f"Unknown format {fmt}", status=400)
        if (database, table) not in self.tables:
            return _clickhouse_error(60, f"Table {database}.{table} does not exist", status=404)
        rows = []
        for line in body.decode().splitlines():
            if line.strip():
                row = json.loads(line)
                if not isinstance(row, dict):
                    return _clickhouse_error(117, "Cannot parse JSON object", status=400)
                rows.append(row)
        self.rows.setdefault((database, table), []).extend(rows)
        self._reporting(f"{database}.{table}: {json.dumps(row)}" for row in rows)
        self.settings.append({k: v for k, v in params.items() if k != "query"})
        return 200, b"", "text/plain"


def _clickhouse_error(code: int, text: str, *, status: int) -> tuple[int, bytes, str]:
    return status, f"Code: {code}. DB::Exception: {text}.".encode(), "text/plain"


# ---------------------------------------------------------------------- Loki


@dataclass
class LokiPush(Sink):
    """Loki's push API (JSON): ``POST /loki/api/v1/push`` with ``{"streams": [{"stream":
    labels, "values": [[<ns timestamp string>, line], ...]}]}``; multi-tenant (as with
    ``auth_enabled: true``): a push without ``X-Scope-OrgID`` is refused with 401."""

    #: tenant → [(labels, ns timestamp, line)]
    lines: dict[str, list[tuple[dict[str, str], int, str]]] = field(default_factory=dict)

    def _clear(self) -> None:
        self.lines.clear()

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> tuple[int, bytes, str]:
        if urlsplit(handler.path).path != "/loki/api/v1/push":
            return 404, b"404 page not found\n", "text/plain"
        tenant = handler.headers.get("x-scope-orgid")
        if not tenant:
            return 401, b"no org id\n", "text/plain"
        if handler.headers.get("content-type", "").split(";")[0] != "application/json":
            return 415, b"unsupported content type\n", "text/plain"
        try:
            streams = json.loads(body)["streams"]
            accepted = []
            for stream in streams:
                labels = stream["stream"]
                assert isinstance(labels, dict)
                for stamp, line in stream["values"]:
                    assert isinstance(stamp, str) and isinstance(line, str)
                    accepted.append((labels, int(stamp), line))
        except (ValueError, KeyError, TypeError, AssertionError):
            return 400, b"loghttp: malformed push request\n", "text/plain"
        self.lines.setdefault(tenant, []).extend(accepted)
        self._reporting(
            f"{tenant} {json.dumps(labels)} {stamp}: {line}" for labels, stamp, line in accepted
        )
        return 204, b"", "text/plain"


# ---------------------------------------------------------------------- Elasticsearch


@dataclass
class BulkSearch(Sink):
    """Elasticsearch's ``POST /_bulk``: NDJSON, an action line (``create``/``index`` with
    ``_index``) then the document, the body ended by a newline; basic auth when ``user`` is
    set. ``refuse`` documents of the next requests are refused one by one (200, ``"errors":
    true``, the item's ``error``), as a mapping conflict does."""

    user: str = ""
    password: str = ""
    refuse: int = 0
    #: index → documents
    documents: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    actions: list[str] = field(default_factory=list)

    def _clear(self) -> None:
        self.documents.clear()
        self.actions.clear()
        self.refuse = 0

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> tuple[int, bytes, str]:
        if urlsplit(handler.path).path != "/_bulk":
            return 404, b'{"error":"no handler"}', "application/json"
        if self.user:
            expected = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
            if handler.headers.get("authorization") != f"Basic {expected}":
                return _search_error(401, "security_exception", "missing authentication")
        if not body.endswith(b"\n"):
            reason = "The bulk request must be terminated by a newline [\\n]"
            return _search_error(400, "illegal_argument_exception", reason)
        lines = body.decode().split("\n")[:-1]
        if len(lines) % 2:
            return _search_error(400, "illegal_argument_exception", "action without a document")
        items: list[dict[str, Any]] = []
        for action_line, document_line in zip(lines[::2], lines[1::2], strict=True):
            ((action, meta),) = json.loads(action_line).items()
            document = json.loads(document_line)
            self.actions.append(action)
            index = meta["_index"]
            if self.refuse:
                self.refuse -= 1
                error = {"type": "document_parsing_exception", "reason": "refused"}
                items.append({action: {"_index": index, "status": 400, "error": error}})
                continue
            self.documents.setdefault(index, []).append(document)
            self._reporting(iter([f"{index}: {json.dumps(document)}"]))
            items.append({action: {"_index": index, "status": 201, "result": "created"}})
        errors = any("error" in next(iter(item.values())) for item in items)
        answer = {"took": 1, "errors": errors, "items": items}
        return 200, json.dumps(answer).encode(), "application/json"


def _search_error(status: int, kind: str, reason: str) -> tuple[int, bytes, str]:
    answer = {"error": {"type": kind, "reason": reason}, "status": status}
    return status, json.dumps(answer).encode(), "application/json"


def _table(given: str) -> tuple[str, str]:
    database, dot, table = given.partition(".")
    if not (database and dot and table):
        raise argparse.ArgumentTypeError(f"{given!r} is not DATABASE.TABLE")
    return database, table


def _sink(arguments: argparse.Namespace) -> tuple[Sink, str, str]:
    """The sink the command line asks for, its name, and what a client needs to know."""
    port = arguments.port if arguments.port is not None else _DEFAULT_PORTS[arguments.kind]
    address = {"host": arguments.host, "port": port, "report": by_hand.say}
    if arguments.kind == "clickhouse":
        tables = set(arguments.table or [("logs", "access")])
        user, password = arguments.user or "default", arguments.password
        names = ", ".join(sorted(f"{database}.{table}" for database, table in tables))
        return (
            ClickHouseHttp(**address, user=user, password=password, tables=tables),
            "ClickHouse HTTP interface",
            f"INSERT INTO {names} FORMAT JSONEachRow; user {user}, password {password or '-'}",
        )
    if arguments.kind == "loki":
        return LokiPush(**address), "Loki push API", "/loki/api/v1/push, X-Scope-OrgID required"
    user, password = arguments.user or "", arguments.password
    access = f"basic auth {user} / {password}" if user else "no authentication"
    return BulkSearch(**address, user=user, password=password), "Elasticsearch", f"_bulk, {access}"


@contextmanager
def _by_hand(arguments: argparse.Namespace) -> Iterator[str]:
    sink, name, details = _sink(arguments)
    with serving(sink):
        yield f"{name} {by_hand.LISTENING} {sink.url()} ({details}; a line for each entry taken)"


_DEFAULT_PORTS = {"clickhouse": 8123, "loki": 3100, "search": 9200}

if __name__ == "__main__":
    parser = by_hand.command_line(
        __doc__.split("\n\n")[0],
        port=None,
        port_help="(default: " + ", ".join(f"{k} {v}" for k, v in _DEFAULT_PORTS.items()) + ")",
    )
    parser.add_argument("--kind", choices=list(_DEFAULT_PORTS), required=True)
    parser.add_argument(
        "--table",
        type=_table,
        action="append",
        metavar="DATABASE.TABLE",
        help="clickhouse: a table INSERTs may go to (repeatable; default: logs.access)",
    )
    parser.add_argument(
        "--user", help="clickhouse: its user (default: default); search: basic auth (default: none)"
    )
    parser.add_argument("--password", default="", help="the user's (default: empty)")
    by_hand.serve(parser, _by_hand)
