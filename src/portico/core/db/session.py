"""The unit of work: a request (or a job) owns its transaction.

Services flush, never commit. The dependency below commits once the endpoint function has
returned (``scope="function"``: before the response is sent, so a failed commit is answered
as an error and not after a 2xx already left) and rolls back on any error — except errors
that ask for their side effects to be kept (``PorticoError.commit``), such as revoking a
refresh-token family when reuse is detected.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.engine import Database
from portico.core.errors import PorticoError


async def _request_session(request: Request) -> AsyncIterator[AsyncSession]:
    database: Database = request.app.state.database
    async with database.session() as session:
        try:
            yield session
        except PorticoError as error:
            if error.commit:
                await session.commit()
            else:
                await session.rollback()
            raise
        except BaseException:
            await session.rollback()
            raise
        else:
            await session.commit()
            run_after_commit(session)


def after_commit(session: AsyncSession, callback: Callable[[], None]) -> None:
    """Run ``callback`` once the unit of work has committed (never if it rolls back): for
    telling others about a change only when they can see it."""
    session.info.setdefault("after_commit", []).append(callback)


def run_after_commit(session: AsyncSession) -> None:
    for callback in session.info.pop("after_commit", []):
        callback()


SessionDep = Annotated[AsyncSession, Depends(_request_session, scope="function")]


async def end_reads(session: AsyncSession) -> None:
    """End the request's transaction before a long wait outside the store (a remote check):
    so far it has only read (authentication, lookups), and on SQLite a transaction holds the
    write lock from its BEGIN, blocking every writer while the wait lasts. The next statement
    begins a new transaction, which the request still owns (``SessionDep`` commits it).
    Loaded objects keep their values (the sessions do not expire them on commit)."""
    if session.new or session.dirty or session.deleted:
        raise RuntimeError("end_reads: the transaction has pending changes")
    if session.in_transaction():
        await session.commit()
