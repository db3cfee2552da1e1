"""The test-server helpers really start servers.

No skips on missing binaries: a machine without them should fail loudly with the hint to run
scripts/ensure-system-packages.sh, not silently run a reduced suite.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from .pgcluster import PostgresCluster
from .redisserver import RedisServer


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
