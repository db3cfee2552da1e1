"""The outbox delivery worker: sends what ``core.outbox`` queued, apart from any request.

A round claims the pending messages that are due (``next_attempt_at`` ≤ now) in a short
transaction that also pushes their ``next_attempt_at`` forward by a lease, so that another
worker (another ``portico serve`` replica) does not take them meanwhile: on PostgreSQL the
claim is ``SELECT ... FOR UPDATE SKIP LOCKED``; SQLite has a single writer (the claim runs
under ``BEGIN IMMEDIATE``), which gives the same guarantee. Each message is then sent with
aiosmtplib and its outcome recorded in its own short transaction, guarded by the lease: an
outcome is written only by the worker whose lease still holds.

Outcomes: sent (``sent_at``); a failure schedules a retry with exponential backoff
(``backoff_base × 2^(attempts-1)``, capped, minus up to 20 % jitter so that a burst does not
retry in lockstep) and records ``last_error`` (scrubbed: never the SMTP password); after
``max_attempts`` the message is failed. Delivery is at least once: a worker killed between
sending and recording sends that message again when its lease expires.

Without ``PORTICO_SMTP_URL`` (the embedded default) a message is logged — kind, recipient
and subject, never the body, which may hold a link or a token — and marked sent.

The worker polls every ``poll_seconds`` and can be poked: ``wake()`` after the commit of a
transaction that queued mail (``core.db.session.after_commit(session, mailer.wake)``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import aiosmtplib
from sqlalchemy import select, update

from portico.core.background import BackgroundLoop
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.logging import redact_text
from portico.core.outbox import EmailStatus, OutboxEmail

logger = logging.getLogger("portico.mailer")

MAX_ERROR_LENGTH = 1000
_RUNNING: set[Mailer] = set()


def wake() -> None:
    """Tell this process's mailers that mail was queued (call it after the commit)."""
    for mailer in list(_RUNNING):
        mailer.wake()


@dataclass(frozen=True)
class SmtpConfig:
    """``smtp://user:pass@host:port`` (``?starttls=1`` to require STARTTLS, ``=0`` to never
    try it; unset: upgraded when the server offers it) or ``smtps://`` (implicit TLS)."""

    host: str
    port: int
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    use_tls: bool = False
    start_tls: bool | None = None

    @classmethod
    def parse(cls, url: str) -> SmtpConfig:
        # Messages name the setting, never echo the URL: it holds the password.
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps"):
            raise ValueError("PORTICO_SMTP_URL: the scheme must be smtp:// or smtps://")
        if not parts.hostname:
            raise ValueError("PORTICO_SMTP_URL: a host is required")
        start_tls: bool | None = None
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key != "starttls" or value not in ("0", "1", "true", "false"):
                raise ValueError("PORTICO_SMTP_URL: the only option is starttls=1 or starttls=0")
            start_tls = value in ("1", "true")
        implicit = parts.scheme == "smtps"
        if implicit and start_tls:
            raise ValueError("PORTICO_SMTP_URL: smtps:// is already TLS; drop starttls=1")
        try:
            port = parts.port or (465 if implicit else 587 if start_tls else 25)
        except ValueError:
            raise ValueError("PORTICO_SMTP_URL: the port must be a number") from None
        return cls(
            host=parts.hostname,
            port=port,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password is not None else None,
            use_tls=implicit,
            start_tls=False if implicit else start_tls,
        )


def backoff(attempts: int, *, base: float, cap: float, jitter: float) -> timedelta:
    """Delay before the next try after ``attempts`` failures; ``jitter`` in [0, 1) shortens
    it by up to 20 % (never lengthens it, so the nominal delay is an upper bound)."""
    nominal = min(cap, base * 2 ** max(0, attempts - 1))
    return timedelta(seconds=nominal * (1 - 0.2 * jitter))


class Mailer(BackgroundLoop):
    task_name = "portico-mailer"

    def __init__(
        self,
        database: Database,
        clock: Clock,
        *,
        smtp_url: str = "",
        mail_from: str = "portico@localhost",
        poll_seconds: float = 2.0,
        batch_size: int = 10,
        max_attempts: int = 8,
        backoff_base: float = 30.0,
        backoff_cap: float = 3600.0,
        lease_seconds: float = 300.0,
        timeout_seconds: float = 10.0,
    ) -> None:
        super().__init__()
        self.database = database
        self.clock = clock
        self.smtp = SmtpConfig.parse(smtp_url) if smtp_url else None
        self.mail_from = mail_from
        self.poll_seconds = poll_seconds
        self.batch_size = batch_size
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.lease = timedelta(seconds=lease_seconds)
        self.timeout_seconds = timeout_seconds
        # a batch must finish well inside its lease: each send is bounded by twice the timeout
        assert batch_size * timeout_seconds * 2 < lease_seconds, "lease shorter than a batch"
        self._domain = mail_from.rpartition("@")[2] or "localhost"
        self._local_hostname = socket.gethostname() or "localhost"  # getfqdn() may do DNS

    # ------------------------------------------------------------------ running
    async def run(self) -> None:
        _RUNNING.add(self)
        try:
            while not self._stopping:
                try:
                    handled = await self.deliver_due()
                except Exception:  # the worker outlives a bad moment of the store
                    logger.exception("outbox delivery round failed; retrying")
                    handled = 0
                if handled >= self.batch_size:
                    continue  # more may be due: no pause
                await self._sleep(self.poll_seconds)
        finally:
            _RUNNING.discard(self)

    # ------------------------------------------------------------------ one round
    async def deliver_due(self) -> int:
        """Claim the messages that are due and deliver them; how many were handled."""
        claimed, lease_until = await self._claim()
        for index, email in enumerate(claimed):
            if self._stopping:
                await self._release(claimed[index:], lease_until)
                break
            await self._deliver(email, lease_until)
        return len(claimed)

    async def _claim(self) -> tuple[list[OutboxEmail], datetime]:
        now = self.clock.now()
        lease_until = now + self.lease
        async with self.database.session() as session, session.begin():
            rows = list(
                await session.scalars(
                    select(OutboxEmail)
                    .where(
                        OutboxEmail.status == EmailStatus.PENDING,
                        OutboxEmail.next_attempt_at <= now,
                    )
                    .order_by(OutboxEmail.next_attempt_at, OutboxEmail.id)
                    .limit(self.batch_size)
                    .with_for_update(skip_locked=True)
                )
            )
            for row in rows:
                row.next_attempt_at = lease_until
        return rows, lease_until

    async def _release(self, emails: list[OutboxEmail], lease_until: datetime) -> None:
        for email in emails:  # not tried: due again at once, for whoever runs next
            await self._record(email, lease_until, next_attempt_at=self.clock.now())

    async def _deliver(self, email: OutboxEmail, lease_until: datetime) -> None:
        try:
            message = self.build_message(email)
        except (ValueError, TypeError) as error:  # e.g. a line break in the address: final
            await self._record(
                email,
                lease_until,
                status=EmailStatus.FAILED,
                attempts=email.attempts + 1,
                last_error=self._scrub(f"cannot build the message: {error}"),
            )
            return
        try:
            await self._send(email, message)
        except Exception as error:
            await self._failed(email, lease_until, error)
            return
        await self._record(
            email,
            lease_until,
            status=EmailStatus.SENT,
            attempts=email.attempts + 1,
            sent_at=self.clock.now(),
            last_error=None,
        )

    async def _send(self, email: OutboxEmail, message: EmailMessage) -> None:
        if self.smtp is None:
            logger.info(
                "email not sent (no PORTICO_SMTP_URL): kind=%s to=%s subject=%r",
                email.kind,
                email.to_address,
                email.subject,
            )
            return
        smtp = self.smtp
        # aiosmtplib's timeout bounds each step; the whole exchange gets twice that
        async with asyncio.timeout(self.timeout_seconds * 2):
            await aiosmtplib.send(
                message,
                hostname=smtp.host,
                port=smtp.port,
                username=smtp.username,
                password=smtp.password,
                use_tls=smtp.use_tls,
                start_tls=smtp.start_tls,
                timeout=self.timeout_seconds,
                local_hostname=self._local_hostname,
            )

    async def _failed(self, email: OutboxEmail, lease_until: datetime, error: Exception) -> None:
        attempts = email.attempts + 1
        detail = self._scrub(f"{type(error).__name__}: {error}".rstrip(": "))
        if attempts >= self.max_attempts:
            logger.warning("email %s failed after %d attempts: %s", email.id, attempts, detail)
            await self._record(
                email, lease_until, status=EmailStatus.FAILED, attempts=attempts, last_error=detail
            )
            return
        delay = backoff(
            attempts,
            base=self.backoff_base,
            cap=self.backoff_cap,
            jitter=random.random(),  # noqa: S311 - spreading retries, not a secret
        )
        logger.info(
            "email %s not sent (attempt %d): %s; retry in %s", email.id, attempts, detail, delay
        )
        await self._record(
            email,
            lease_until,
            attempts=attempts,
            last_error=detail,
            next_attempt_at=self.clock.now() + delay,
        )

    async def _record(self, email: OutboxEmail, lease_until: datetime, **values: Any) -> None:
        async with self.database.session() as session, session.begin():
            result = await session.execute(
                update(OutboxEmail)
                .where(
                    OutboxEmail.id == email.id,
                    OutboxEmail.status == EmailStatus.PENDING,
                    OutboxEmail.next_attempt_at == lease_until,
                )
                .values(**values)
            )
        if getattr(result, "rowcount", 0) != 1:  # our lease expired and someone else took it
            logger.warning("email %s: lease lost before its outcome was recorded", email.id)

    # ------------------------------------------------------------------ helpers
    def build_message(self, email: OutboxEmail) -> EmailMessage:
        message = EmailMessage()
        message["From"] = self.mail_from
        message["To"] = email.to_address
        message["Subject"] = " ".join(email.subject.split())  # no header folding tricks
        message["Date"] = format_datetime(self.clock.now())
        message["Message-ID"] = make_msgid(domain=self._domain)  # the default does a DNS lookup
        message["X-Portico-Email-Id"] = str(email.id)
        message.set_content(email.body_text)
        return message

    def _scrub(self, text: str) -> str:
        """An error as it may be stored and shown: without the SMTP password, bounded."""
        password = self.smtp.password if self.smtp else None
        if password:
            text = text.replace(password, "[REDACTED]")
        return redact_text(text)[:MAX_ERROR_LENGTH]


async def failed_ids(database: Database, *, kind: str | None = None) -> list[uuid.UUID]:
    """The messages that were given up on, oldest first (optionally of one kind)."""
    statement = select(OutboxEmail.id).where(OutboxEmail.status == EmailStatus.FAILED)
    if kind is not None:
        statement = statement.where(OutboxEmail.kind == kind)
    async with database.session() as session:
        return list(await session.scalars(statement.order_by(OutboxEmail.created_at)))


async def requeue(database: Database, clock: Clock, *, ids: list[uuid.UUID]) -> int:
    """Put failed messages back in the queue with fresh attempts (the mail server was fixed,
    or the address corrected); how many were still failed and so re-queued."""
    async with database.session() as session, session.begin():
        result = await session.execute(
            update(OutboxEmail)
            .where(OutboxEmail.id.in_(ids), OutboxEmail.status == EmailStatus.FAILED)
            .values(status=EmailStatus.PENDING, attempts=0, next_attempt_at=clock.now())
        )
    return int(getattr(result, "rowcount", 0))
