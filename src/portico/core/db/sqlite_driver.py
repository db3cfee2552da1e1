"""SQLAlchemy's aiosqlite adapter with one thread hand-off per statement instead of four.

aiosqlite runs each sqlite3 call on the connection's own thread and hands the result back to
the event loop: a queue put, a thread wake-up and a loop wake-up through its self-pipe, about
as costly as a simple indexed SELECT itself. SQLAlchemy's adapter makes four such calls per
statement (open a cursor, execute, fetch all rows, close the cursor), so an authenticated
catalogue page (seven statements) waited for 28 hand-offs. The cursor here does the four in
one function on the connection's thread and keeps what the statement produced (description,
rows, row count, last row id); ``bench/bench_sqlite_driver.py`` measures it against the
stock adapter in one run.

Everything else is SQLAlchemy's and aiosqlite's own: the dialect, the connection (commit,
rollback, isolation level, termination), server-side cursors (``stream()``, which fetch in
chunks and keep their cursor open), errors (the sqlite3 exceptions, raised by ``await_``
exactly as before). It is installed through ``create_async_engine(module=...)``, the
documented way to give a dialect another DB-API module; ``aiosqlite.Connection._execute``
is the call aiosqlite's own cursor makes, and SQLAlchemy's adapter uses that connection's
internals the same way (its isolation-level setter).
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Sequence
from typing import Any

import aiosqlite
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util.concurrency import await_

#: what one statement left behind: description, rows (None without a result), row count,
#: last row id
_Outcome = tuple[Any, list[Any] | None, int, int | None]


def _run_statement(
    connection: sqlite3.Connection, operation: Any, parameters: Any, many: bool
) -> _Outcome:
    """On the connection's thread: the whole life of a cursor for one statement."""
    cursor = connection.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        else:
            cursor.execute(operation, () if parameters is None else parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else None
        # read after the rows: for INSERT ... RETURNING sqlite3 counts them as they come
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


class OneHopCursor(AsyncAdapt_aiosqlite_cursor):
    """A buffered cursor whose statement runs in one hand-off to the connection's thread."""

    __slots__ = ("_arraysize", "_description", "_lastrowid", "_rowcount")

    def __init__(self, adapt_connection: AsyncAdapt_aiosqlite_connection) -> None:
        self._description: Any = None
        self._rowcount = -1
        self._lastrowid: int | None = None
        self._arraysize = 1
        super().__init__(adapt_connection)

    # no aiosqlite cursor of its own: one is opened and closed per statement, on the thread
    def _make_new_cursor(self, connection: Any) -> Any:
        return None

    def _aenter_cursor(self, cursor: Any) -> Any:
        return None

    @property
    def description(self) -> Any:
        return self._description

    @property
    def rowcount(self) -> int:
        return self._rowcount

    @property
    def lastrowid(self) -> Any:
        return self._lastrowid

    @property
    def arraysize(self) -> int:
        return self._arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._arraysize = value

    async def _async_soft_close(self) -> None:
        return None  # nothing is open between statements

    def close(self) -> None:
        self._rows.clear()

    async def _run(self, operation: Any, parameters: Any, *, many: bool) -> None:
        connection: aiosqlite.Connection = self._connection  # type: ignore[assignment]
        async with self._adapt_connection._execute_mutex:
            outcome: _Outcome = await connection._execute(  # type: ignore[no-untyped-call]
                _run_statement, connection._conn, operation, parameters, many
            )
        self._description, rows, self._rowcount, self._lastrowid = outcome
        self._rows = deque(rows) if rows is not None else deque()

    def execute(self, operation: Any, parameters: Any = None) -> Any:
        try:
            return await_(self._run(operation, parameters, many=False))
        except Exception as error:
            self._adapt_connection._handle_exception(error)

    def executemany(self, operation: Any, seq_of_parameters: Sequence[Any]) -> Any:
        try:
            return await_(self._run(operation, seq_of_parameters, many=True))
        except Exception as error:
            self._adapt_connection._handle_exception(error)


class OneHopConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()
    # mypy compares the properties above with the base cursor's attributes (arraysize is a
    # plain attribute there): the class is a drop-in all the same
    _cursor_cls = OneHopCursor  # type: ignore[assignment]


class OneHopDbapi(AsyncAdapt_aiosqlite_dbapi):
    """The DB-API module the dialect is given: aiosqlite's, with connections that use
    :class:`OneHopCursor`."""

    def connect(self, *arg: Any, **kw: Any) -> OneHopConnection:
        adapted = super().connect(*arg, **kw)
        return OneHopConnection(self, adapted._connection)


def one_hop_dbapi() -> OneHopDbapi:
    return OneHopDbapi(aiosqlite, sqlite3)
