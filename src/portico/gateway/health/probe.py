"""One active health probe: a TCP connect, or a minimal HTTP/1.1 ``GET`` whose status line is
all that is read.

The probe is deliberately small — ``asyncio.open_connection``, one request written in one
go, one ``readline`` — so that probing many nodes costs little: no HTTP client, no
connection pool, no body read; the connection is aborted as soon as the status is known.

``https`` probes use TLS **without certificate verification** (no CA check, no host-name
check): the probe asks whether the node answers, not whether it is who it claims to be;
the proxy's own TLS settings govern real traffic. SNI carries the probe's host name.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import ssl
from dataclasses import dataclass

__all__ = [
    "ProbeOutcome",
    "ProbeResult",
    "http_request",
    "insecure_tls_context",
    "parse_status_line",
    "probe",
]

_MAX_STATUS_LINE = 4096
_USER_AGENT = "portico-healthcheck"


class ProbeOutcome(enum.Enum):
    CONNECTED = "connected"  # tcp probe: the connect succeeded
    STATUS = "status"  # http(s) probe: a status line was read
    TCP_FAILURE = "tcp_failure"  # refused, reset, closed early, TLS failure, bad response
    TIMEOUT = "timeout"  # no answer within the probe's timeout


@dataclass(frozen=True, slots=True)
class ProbeResult:
    outcome: ProbeOutcome
    status: int | None = None
    detail: str = ""


@functools.cache
def insecure_tls_context() -> ssl.SSLContext:
    """A client TLS context that verifies nothing (shared: building one is not free)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def http_request(path: str, host_header: str) -> bytes:
    """The probe request: ``GET`` with ``Host``, asking the node to close afterwards."""
    return (
        f"GET {path} HTTP/1.1\r\n"
        f"Host: {host_header}\r\n"
        f"User-Agent: {_USER_AGENT}\r\n"
        "Accept: */*\r\n"
        "Connection: close\r\n"
        "\r\n"
    ).encode("latin-1")


def parse_status_line(line: bytes) -> int | None:
    """The status code of an ``HTTP/1.x NNN reason`` line, or None when it is not one."""
    parts = line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        return None
    code = parts[1]
    if len(code) != 3 or not code.isdigit():
        return None
    return int(code)


async def probe(
    kind: str,
    host: str,
    port: int,
    *,
    seconds: float,
    path: str = "/",
    host_header: str | None = None,
) -> ProbeResult:
    """Probe ``host:port`` once, within ``seconds``; ``kind`` is ``tcp``, ``http`` or
    ``https``. Never raises (but is cancellable)."""
    name = host_header or host
    tls = insecure_tls_context() if kind == "https" else None
    try:
        async with asyncio.timeout(seconds):
            reader, writer = await asyncio.open_connection(
                host,
                port,
                ssl=tls,
                server_hostname=name if tls is not None else None,
                limit=_MAX_STATUS_LINE,
            )
            try:
                if kind == "tcp":
                    return ProbeResult(ProbeOutcome.CONNECTED)
                header = f"[{name}]" if ":" in name else name
                writer.write(http_request(path, header))
                line = await reader.readline()
            finally:
                writer.transport.abort()
    except TimeoutError:
        return ProbeResult(ProbeOutcome.TIMEOUT, detail=f"no answer within {seconds:g}s")
    except (OSError, ValueError, EOFError) as error:  # ssl.SSLError is an OSError
        return ProbeResult(ProbeOutcome.TCP_FAILURE, detail=type(error).__name__)
    status = parse_status_line(line)
    if status is None:
        detail = "connection closed" if not line else "bad status line"
        return ProbeResult(ProbeOutcome.TCP_FAILURE, detail=detail)
    return ProbeResult(ProbeOutcome.STATUS, status=status)
