"""The outbox mailer against a real SMTP server on loopback: delivery, retries with backoff
while the server is down, giving up, the log-only default, and concurrent workers."""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from portico.core import mailer as mailer_module
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.db.session import run_after_commit
from portico.core.mailer import Mailer, SmtpConfig, backoff
from portico.core.outbox import EmailStatus, OutboxEmail, enqueue_email
from portico.core.settings import Settings
from portico.worker import build_workers
from tests.support.clock import FrozenClock
from tests.support.smtpserver import SmtpServer
from tests.support.waiting import eventually


async def queue(database: Database, clock: Clock, count: int = 1, **fields: str) -> list[uuid.UUID]:
    ids = []
    async with database.session() as session, session.begin():
        for n in range(count):
            email = await enqueue_email(
                session,
                kind=fields.get("kind", "activation"),
                to=fields.get("to", f"dev{n}@example.com"),
                subject=fields.get("subject", f"Welcome {n}"),
                body=fields.get("body", "Your account is active."),
                now=clock.now(),
            )
            ids.append(email.id)
    return ids


async def row(database: Database, email_id: uuid.UUID) -> OutboxEmail:
    async with database.session() as session:
        found = await session.get(OutboxEmail, email_id)
        assert found is not None
        return found


async def test_a_queued_email_reaches_the_smtp_server(database: Database, clock: Clock) -> None:
    with SmtpServer() as server:
        mailer = Mailer(database, clock, smtp_url=server.url, mail_from="portal@example.com")
        [email_id] = await queue(database, clock, to="ada@example.com", subject="Welcome, Ada")
        assert await mailer.deliver_due() == 1
        [message] = await server.wait_for(1)
    assert message["To"] == "ada@example.com"
    assert message["From"] == "portal@example.com"
    assert message["Subject"] == "Welcome, Ada"
    assert message["X-Portico-Email-Id"] == str(email_id)
    assert message.get_content().strip() == "Your account is active."
    assert server.recipients == [["ada@example.com"]]
    sent = await row(database, email_id)
    assert sent.status is EmailStatus.SENT
    assert sent.attempts == 1
    assert sent.sent_at is not None and sent.sent_at <= clock.now()
    assert sent.last_error is None
    assert await mailer.deliver_due() == 0  # nothing is sent twice


async def test_the_running_mailer_is_woken_after_mail_is_queued(
    database: Database, clock: Clock
) -> None:
    with SmtpServer() as server:
        mailer = Mailer(database, clock, smtp_url=server.url, poll_seconds=60)
        mailer.start()
        try:
            # its first round finds nothing, then it waits a minute
            await eventually(lambda: mailer.idle)
            await queue(database, clock)
            mailer_module.wake()
            await server.wait_for(1)
        finally:
            await mailer.stop()


async def test_retries_with_backoff_while_the_server_is_down(database: Database) -> None:
    # A clock that stands still: the delay read back is the one the mailer chose. On the wall
    # clock it was that less the time taken to read it, below the jitter's lower bound about
    # once in a hundred runs.
    clock = FrozenClock()
    server = SmtpServer()  # its port is chosen, nothing listens yet
    mailer = Mailer(database, clock, smtp_url=server.url, backoff_base=30, timeout_seconds=2)
    [email_id] = await queue(database, clock)

    assert await mailer.deliver_due() == 1
    first = await row(database, email_id)
    assert first.status is EmailStatus.PENDING
    assert first.attempts == 1
    assert first.last_error and "connect" in first.last_error.lower()
    delay = first.next_attempt_at - clock.now()
    assert timedelta(seconds=24) <= delay <= timedelta(seconds=30)
    assert await mailer.deliver_due() == 0  # not due yet

    clock.advance(timedelta(seconds=30))
    assert await mailer.deliver_due() == 1
    second = await row(database, email_id)
    assert second.attempts == 2
    assert timedelta(seconds=48) <= second.next_attempt_at - clock.now() <= timedelta(seconds=60)

    with server:
        clock.advance(timedelta(seconds=60))
        assert await mailer.deliver_due() == 1
        await server.wait_for(1)
    delivered = await row(database, email_id)
    assert delivered.status is EmailStatus.SENT
    assert delivered.attempts == 3
    assert delivered.last_error is None


async def test_gives_up_after_the_last_attempt(database: Database, clock: Clock) -> None:
    server = SmtpServer()  # never started
    mailer = Mailer(
        database, clock, smtp_url=server.url, max_attempts=3, backoff_cap=60, timeout_seconds=2
    )
    [email_id] = await queue(database, clock)
    for _ in range(3):
        assert await mailer.deliver_due() == 1
        clock.advance(timedelta(seconds=60))
    failed = await row(database, email_id)
    assert failed.status is EmailStatus.FAILED
    assert failed.attempts == 3
    assert failed.last_error
    clock.advance(timedelta(days=1))
    assert await mailer.deliver_due() == 0


async def test_the_smtp_password_never_reaches_the_row(database: Database, clock: Clock) -> None:
    with SmtpServer(auth=("mailer", "right-password")) as server:
        wrong = server.url.replace("right-password", "s3cret%2Fwrong")
        mailer = Mailer(database, clock, smtp_url=wrong, timeout_seconds=2)
        [email_id] = await queue(database, clock)
        await mailer.deliver_due()
        failed = await row(database, email_id)
        assert failed.status is EmailStatus.PENDING
        assert failed.last_error and "Authentication" in failed.last_error
        assert "s3cret" not in failed.last_error
        assert server.messages == []

        right = Mailer(database, clock, smtp_url=server.url, timeout_seconds=2)
        clock.advance(timedelta(minutes=1))
        await right.deliver_due()
        await server.wait_for(1)


async def test_without_smtp_url_mail_is_logged_and_marked_sent(
    database: Database, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    mailer = Mailer(database, clock)
    [email_id] = await queue(
        database, clock, to="bob@example.com", subject="Reset", body="token=body-only-secret"
    )
    with caplog.at_level(logging.INFO, logger="portico.mailer"):
        assert await mailer.deliver_due() == 1
    logged = caplog.text
    assert "bob@example.com" in logged and "Reset" in logged
    assert "body-only-secret" not in logged  # never the body
    assert (await row(database, email_id)).status is EmailStatus.SENT


async def test_a_message_that_cannot_be_built_fails_at_once(
    database: Database, clock: Clock
) -> None:
    mailer = Mailer(database, clock)
    [email_id] = await queue(database, clock, to="eve@example.com\r\nBcc: x@example.com")
    await mailer.deliver_due()
    failed = await row(database, email_id)
    assert failed.status is EmailStatus.FAILED
    assert failed.last_error and failed.last_error.startswith("cannot build the message")


async def test_two_workers_never_send_one_email_twice(
    database_url: str, database: Database, clock: Clock
) -> None:
    ids = await queue(database, clock, count=40)
    with SmtpServer() as server:
        other = Database(database_url)  # a second process, as far as the store can tell
        try:
            workers = [
                Mailer(database, clock, smtp_url=server.url, batch_size=3),
                Mailer(other, clock, smtp_url=server.url, batch_size=3),
            ]

            async def drain(mailer: Mailer) -> int:
                handled = 0
                while (n := await mailer.deliver_due()) > 0:
                    handled += n
                return handled

            counts = await asyncio.gather(*(drain(w) for w in workers))
        finally:
            await other.dispose()
        messages = await server.wait_for(40)
    received = [m["X-Portico-Email-Id"] for m in messages]
    assert sorted(received) == sorted(str(i) for i in ids)  # each once, none twice
    assert sum(counts) == 40
    async with database.session() as session:
        statuses = set(await session.scalars(select(OutboxEmail.status)))
    assert statuses == {EmailStatus.SENT}


async def test_a_stopping_mailer_releases_what_it_did_not_try(
    database: Database, clock: Clock
) -> None:
    mailer = Mailer(database, clock, batch_size=5)
    ids = await queue(database, clock, count=3)
    mailer._stopping = True  # as if stop() came while the batch was claimed
    await mailer.deliver_due()
    for email_id in ids:
        released = await row(database, email_id)
        assert released.status is EmailStatus.PENDING
        assert released.attempts == 0
        assert released.next_attempt_at <= clock.now()


def test_smtp_urls() -> None:
    plain = SmtpConfig.parse("smtp://mail.example.com")
    assert (plain.host, plain.port, plain.use_tls, plain.start_tls) == (
        "mail.example.com",
        25,
        False,
        None,
    )
    assert SmtpConfig.parse("smtp://mail.example.com?starttls=1").port == 587
    assert SmtpConfig.parse("smtp://mail.example.com?starttls=0").start_tls is False
    implicit = SmtpConfig.parse("smtps://u%40x:p%2Fw@mail.example.com")
    assert (implicit.port, implicit.use_tls, implicit.start_tls) == (465, True, False)
    assert (implicit.username, implicit.password) == ("u@x", "p/w")
    assert "p/w" not in repr(implicit)
    for bad in (
        "http://u:hunter2@mail.example.com",
        "smtp://u:hunter2@mail.example.com?tls=1",
        "smtps://u:hunter2@mail.example.com?starttls=1",
        "smtp://u:hunter2@mail.example.com:port",
        "smtp://",
    ):
        with pytest.raises(ValueError, match="PORTICO_SMTP_URL") as error:
            SmtpConfig.parse(bad)
        assert "hunter2" not in str(error.value)


def test_backoff_doubles_up_to_the_cap_and_jitter_only_shortens() -> None:
    delays = [backoff(n, base=30, cap=600, jitter=0).total_seconds() for n in range(1, 7)]
    assert delays == [30, 60, 120, 240, 480, 600]
    assert backoff(2, base=30, cap=600, jitter=0.99).total_seconds() == pytest.approx(48.12)


async def test_serve_runs_both_workers_and_stops_them(
    settings: Settings, database: Database, clock: Clock
) -> None:
    from portico.core.job_worker import RETRY_FAILED_EMAILS, enqueue
    from portico.core.jobs import Job, JobStatus

    assert (
        build_workers(
            settings.model_copy(update={"run_workers": False}), database=database, clock=clock
        )
        is None
    )
    with pytest.raises(ValueError, match="PORTICO_SMTP_URL"):
        build_workers(
            settings.model_copy(update={"smtp_url": "imap://x"}), database=database, clock=clock
        )
    with SmtpServer() as server:
        configured = settings.model_copy(update={"smtp_url": server.url, "worker_poll_seconds": 60})
        workers = build_workers(configured, database=database, clock=clock)
        assert workers is not None
        workers.start()
        try:
            # both found nothing; they now wait a minute
            await eventually(lambda: workers.mailer.idle and workers.jobs.idle)
            async with database.session() as session:
                async with session.begin():
                    await enqueue_email(
                        session,
                        kind="activation",
                        to="a@example.com",
                        subject="Hi",
                        body="b",
                        now=clock.now(),
                    )
                    job = await enqueue(
                        session, kind=RETRY_FAILED_EMAILS, params={}, created_by=None
                    )
                run_after_commit(session)  # what the request's SessionDep does: wakes the jobs
            mailer_module.wake()
            await server.wait_for(1)

            async def succeeded() -> bool:
                return (await row_of(database, Job, job.id)).status is JobStatus.SUCCEEDED

            await eventually(succeeded)
        finally:
            await workers.stop()
    assert workers.mailer._task is not None and workers.mailer._task.done()
    assert workers.jobs._task is not None and workers.jobs._task.done()


async def row_of(database: Database, model: type[Any], key: uuid.UUID) -> Any:
    async with database.session() as session:
        return await session.get(model, key)
