"""The test-server helpers really start servers.

No skips on missing binaries: a machine without them should fail loudly with the hint to run
scripts/ensure-system-packages.sh, not silently run a reduced suite.
"""

from __future__ import annotations

import os
import smtplib
import socket
from pathlib import Path

import pytest

from . import portico_process
from .pgcluster import PostgresCluster
from .ports import free_port
from .redisserver import RedisServer
from .smtpserver import SmtpServer


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def test_postgres_template_clone_and_drop(tmp_path: Path) -> None:
    with PostgresCluster(tmp_path) as pg:
        port, base = pg.port, pg.base_dir
        assert pg.url("app") == f"postgresql+asyncpg://postgres@127.0.0.1:{port}/app"
        assert pg.url("app", driver="postgresql") == f"postgresql://postgres@127.0.0.1:{port}/app"

        pg.create_database("tpl")
        pg.execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)", database="tpl")
        pg.create_database("clone", template="tpl")
        pg.execute("SELECT 1 FROM t WHERE id = 1", database="clone")

        # A database not cloned from the template must not have the table.
        pg.create_database("fresh")
        with pytest.raises(RuntimeError, match='relation "t" does not exist'):
            pg.execute("SELECT 1 FROM t", database="fresh")

        pg.drop_database("clone")
        pg.drop_database("clone")  # IF EXISTS: dropping twice is fine
        with pytest.raises(RuntimeError, match='database "clone" does not exist'):
            pg.execute("SELECT 1", database="clone")

    assert not base.exists()
    assert not _port_open(port)
    pg.stop()  # idempotent


def test_postgres_rejects_unsafe_names(tmp_path: Path) -> None:
    pg = PostgresCluster(tmp_path)
    for bad in ('x"; DROP DATABASE postgres; --', "Upper", "1abc", "a" * 64, ""):
        with pytest.raises(ValueError, match="invalid database name"):
            pg.create_database(bad)
    with pytest.raises(ValueError, match="invalid database name"):
        pg.drop_database("bad-name")


def test_redis_set_get_round_trip(tmp_path: Path) -> None:
    with RedisServer(tmp_path) as redis:
        port = redis.port
        assert redis.url == f"redis://127.0.0.1:{port}/0"
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"SET portico:k hello\r\n")
            assert sock.recv(64) == b"+OK\r\n"
            sock.sendall(b"GET portico:k\r\n")
            assert sock.recv(64) == b"$5\r\nhello\r\n"

    assert not _port_open(port)
    redis.stop()  # idempotent


def test_smtp_server_moves_off_a_port_taken_before_its_first_start() -> None:
    server = SmtpServer()
    taken = server.port
    with socket.create_server(("127.0.0.1", taken)):
        server.start()
        try:
            assert server.port != taken
            with smtplib.SMTP("127.0.0.1", server.port, timeout=5) as client:
                client.sendmail("a@example.com", ["b@example.com"], b"Subject: hi\r\n\r\nhello")
            assert len(server.messages) == 1
        finally:
            server.stop()
        # a restart keeps the port clients were told: taken now, it is an error
        blocker = socket.create_server(("127.0.0.1", server.port))
        with blocker, pytest.raises(OSError, match="in use"):
            server.start()


def test_portico_serve_moves_off_a_port_taken_before_it_binds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the first port handed out is held by another socket, as if taken after the check
    blocker = socket.create_server(("127.0.0.1", 0))
    taken = blocker.getsockname()[1]
    picks = iter([taken])
    monkeypatch.setattr(portico_process, "free_port", lambda: next(picks, None) or free_port())
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTICO_")}
    env["PORTICO_DATA_DIR"] = str(tmp_path / "var")
    log = tmp_path / "serve.log"
    with blocker:
        process = portico_process.start_serve(env, log, timeout=90)
        try:
            assert env["PORTICO_LISTEN"] != f"127.0.0.1:{taken}"
            assert "address already in use" in log.read_text().lower()  # the first try
        finally:
            portico_process.stop(process)
