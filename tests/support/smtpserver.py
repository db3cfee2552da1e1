"""A real SMTP server on loopback for tests (aiosmtpd in its own thread), collecting what it
receives. It can be stopped and started again on the same port, to play a mail server that
is down for a while; with ``auth`` it requires that login (AUTH PLAIN/LOGIN, no TLS)."""

from __future__ import annotations

import asyncio
import errno
import socket
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


class _BoundController(Controller):
    """aiosmtpd's controller serving on a socket bound beforehand: its own bind runs in its
    thread, and a port in use there only surfaces after ``ready_timeout``; bound here, the
    error is immediate and the port is ours from then on."""

    def __init__(self, listener: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listener = listener

    def _create_server(self) -> Any:
        return self.loop.create_server(
            self._factory_invoker, sock=self._listener, ssl=self.ssl_context
        )


class SmtpServer:
    #: how many ports a first start tries when the one it picked was taken meanwhile
    START_ATTEMPTS = 5

    def __init__(self, *, auth: tuple[str, str] | None = None) -> None:
        self.port = free_port()
        self._started_once = False
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
        """Listen on ``port``. The first start may move to another port if something took
        this one after ``free_port()`` checked it; a restart keeps its port (clients were
        told it), so there a taken port is an error."""
        assert self._controller is None, "already running"
        attempts = 1 if self._started_once else self.START_ATTEMPTS
        for attempt in range(1, attempts + 1):
            try:
                self._listen()
            except OSError as error:
                if error.errno != errno.EADDRINUSE or attempt == attempts:
                    raise
                self.port = free_port()
            else:
                self._started_once = True
                return

    def _listen(self) -> None:
        extra: dict[str, Any] = {}
        if self.auth is not None:
            extra = {
                "authenticator": self._authenticate,
                "auth_require_tls": False,
                "auth_required": False,  # True warns without TLS; a bad login still fails
            }
        listener = socket.create_server(("127.0.0.1", self.port))  # EADDRINUSE: taken
        controller = _BoundController(
            listener,
            _Collector(self),
            hostname="127.0.0.1",
            port=self.port,
            server_hostname="smtp.test",  # the default asks DNS for this host's FQDN
            ready_timeout=5.0,
            **extra,
        )
        try:
            controller.start()
        except BaseException:
            listener.close()
            if not controller.loop.is_closed():
                controller.loop.close()
            raise
        self._controller = controller

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
