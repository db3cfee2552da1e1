"""A real SMTP server on loopback for tests (aiosmtpd in its own thread), collecting what it
receives. It can be stopped and started again on the same port, to play a mail server that
is down for a while; with ``auth`` it requires that login (AUTH PLAIN/LOGIN, no TLS)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from email import message_from_bytes, policy
from email.message import EmailMessage
from types import TracebackType
from typing import Any, Self

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from .ports import free_port
from .waiting import eventually


class _Collector:
    def __init__(self, server: SmtpServer) -> None:
        self.server = server

    async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:  # noqa: N802
        message = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(message, EmailMessage)
        self.server.received(message, list(envelope.rcpt_tos))
        return "250 OK"


class SmtpServer:
    def __init__(self, *, auth: tuple[str, str] | None = None) -> None:
        self.port = free_port()
        self.auth = auth
        self.messages: list[EmailMessage] = []
        self.recipients: list[list[str]] = []
        self._lock = threading.Lock()
        self._controller: Controller | None = None

    @property
    def url(self) -> str:
        if self.auth is None:
            return f"smtp://127.0.0.1:{self.port}?starttls=0"
        user, password = self.auth
        return f"smtp://{user}:{password}@127.0.0.1:{self.port}?starttls=0"

    def received(self, message: EmailMessage, recipients: list[str]) -> None:
        with self._lock:
            self.messages.append(message)
            self.recipients.append(recipients)

    def _authenticate(
        self, _server: Any, _session: Any, _envelope: Any, _mechanism: str, data: Any
    ) -> AuthResult:
        assert self.auth is not None
        ok = (
            isinstance(data, LoginPassword)
            and (
                data.login.decode(),
                data.password.decode(),
            )
            == self.auth
        )
        return AuthResult(success=ok, handled=False)  # handled=False: the server answers 535

    def start(self) -> None:
        assert self._controller is None, "already running"
        extra: dict[str, Any] = {}
        if self.auth is not None:
            extra = {
                "authenticator": self._authenticate,
                "auth_require_tls": False,
                "auth_required": False,  # True warns without TLS; a bad login still fails
            }
        self._controller = Controller(
            _Collector(self),
            hostname="127.0.0.1",
            port=self.port,
            server_hostname="smtp.test",  # the default asks DNS for this host's FQDN
            ready_timeout=5.0,
            **extra,
        )
        self._controller.start()

    def stop(self) -> None:
        controller, self._controller = self._controller, None
        if controller is not None:
            controller.stop()
            loop: asyncio.AbstractEventLoop = controller.loop
            if not loop.is_closed():
                loop.close()

    @property
    def running(self) -> bool:
        return self._controller is not None

    async def wait_for(self, count: int, within: float = 10.0) -> list[EmailMessage]:
        """The messages received, once there are at least ``count`` (polls, no sleep
        longer than needed)."""

        def arrived() -> bool:
            with self._lock:
                return len(self.messages) >= count

        await eventually(
            arrived,
            within,
            interval=0.02,
            what=lambda: f"expected {count} messages, got {len(self.messages)}",
        )
        with self._lock:
            return list(self.messages)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@pytest.fixture
def smtp_server() -> Iterator[SmtpServer]:
    """A running SMTP server on loopback; ``smtp_server.url`` is a ``PORTICO_SMTP_URL``.
    Use it from a conftest: ``from tests.support.smtpserver import smtp_server``."""
    with SmtpServer() as server:
        yield server
