"""Structured logging that never writes a password, token or credential.

Every record carries the request id of the request that produced it, and is written as one
JSON object per line, or as a readable line for a person at a terminal: ``PORTICO_LOG_FORMAT``
chooses (``text``, ``json``, or ``auto``, the default: text when stderr is a terminal, JSON
otherwise, so that a log collector always gets JSON). A filter on the root handler redacts
values of sensitive keys in the record's extras and ``Bearer``/``Basic`` credentials and
``password=`` pairs in messages, so that a careless ``logger.info(..., extra={"body":
payload})`` cannot leak.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

LogFormat = Literal["auto", "text", "json"]

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "portico_request_id", default=None
)

REDACTED = "[REDACTED]"
SENSITIVE_KEYS = frozenset(
    {
        "password",
        "new_password",
        "current_password",
        "password_hash",
        "secret",
        "client_secret",
        "secret_key",
        "token",
        "access_token",
        "refresh_token",
        "refreshtoken",
        "id_token",
        "authorization",
        "cookie",
        "set-cookie",
        "api_key",
        "apikey",
        "private_key",
        "credential",
        "credentials",
        "invite_token",
        "invitetoken",
    }
)
_CREDENTIAL_PATTERNS = (
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+"),
    re.compile(r"(?i)\b(password|secret|token)=([^&\s]+)"),
)
_RESERVED = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


#: the same keys with separators removed, so that camelCase and kebab-case match too
_SENSITIVE_COMPACT = frozenset(k.replace("_", "").replace("-", "") for k in SENSITIVE_KEYS)


def is_sensitive_key(key: str) -> bool:
    return key.lower().replace("_", "").replace("-", "") in _SENSITIVE_COMPACT


def redact(value: Any) -> Any:
    """A copy of ``value`` with the values of sensitive keys replaced, at any depth."""
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if is_sensitive_key(str(k)) and v is not None else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def redact_text(text: str) -> str:
    text = _CREDENTIAL_PATTERNS[0].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _CREDENTIAL_PATTERNS[1].sub(lambda m: f"{m.group(1)}={REDACTED}", text)


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_text(record.msg)
        if record.args:
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            record.args = tuple(redact(a) if isinstance(a, str | Mapping) else a for a in args)
        for key, value in list(vars(record).items()):
            if key in _RESERVED:
                continue
            setattr(record, key, REDACTED if is_sensitive_key(key) else redact(value))
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id_var.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RESERVED and value is not None:
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    """One readable line: time, level, logger, request id, message, then the extras as
    ``key=value`` (already redacted by the filter); a traceback follows on its own lines."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created).astimezone()
        parts = [
            when.isoformat(sep=" ", timespec="milliseconds"),
            f"{record.levelname:<7}",
            record.name,
        ]
        request_id = getattr(record, "request_id", None)
        if request_id:
            parts.append(f"[{request_id}]")
        parts.append(record.getMessage())
        for key, value in vars(record).items():
            if key not in _RESERVED and key != "request_id" and value is not None:
                shown = value if isinstance(value, str) else json.dumps(value, default=str)
                parts.append(f"{key}={shown}")
        line = " ".join(parts)
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


def resolve_format(log_format: LogFormat, stream: TextIO) -> Literal["text", "json"]:
    """``auto`` is text on a terminal and JSON anywhere else (a pipe, a file, a collector)."""
    if log_format != "auto":
        return log_format
    isatty = getattr(stream, "isatty", None)
    return "text" if callable(isatty) and isatty() else "json"


def configure_logging(
    level: str = "INFO", *, log_format: LogFormat = "auto", stream: TextIO | None = None
) -> None:
    """Send every log record to ``stream`` (stderr by default), redacted, in ``log_format``."""
    stream = sys.stderr if stream is None else stream
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    if resolve_format(log_format, stream) == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # uvicorn's access log would print query strings (which may carry tokens); ours does not.
    logging.getLogger("uvicorn.access").disabled = True
    # the problem handler already logged the unexpected error with its request id
    logging.getLogger("uvicorn.error").addFilter(
        lambda record: not record.getMessage().startswith("Exception in ASGI application")
    )
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
