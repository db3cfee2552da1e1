"""Log format: readable text on a terminal, JSON anywhere else, ``PORTICO_LOG_FORMAT`` decides
when set; redaction applies to both."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.core.logging import LogFormat, configure_logging
from portico.core.settings import Settings

LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """configure_logging changes process-wide loggers: put them back as they were."""
    saved = [
        (
            logger,
            logger.handlers[:],
            logger.filters[:],
            logger.level,
            logger.propagate,
            logger.disabled,
        )
        for logger in map(logging.getLogger, LOGGERS)
    ]
    yield
    for logger, handlers, filters, level, propagate, disabled in saved:
        logger.handlers[:] = handlers
        logger.filters[:] = filters
        logger.setLevel(level)
        logger.propagate = propagate
        logger.disabled = disabled


def _emit(log_format: LogFormat, stream: io.StringIO) -> str:
    configure_logging("INFO", log_format=log_format, stream=stream)
    logging.getLogger("portico.test").info(
        "signed in with Bearer abc.def", extra={"user": "ada", "password": "hunter2"}
    )
    return stream.getvalue()


def _settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    for name in ("PORTICO_LOG_FORMAT", "PORTICO_LOG_JSON"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Settings(data_dir=tmp_path, _env_file=None)  # type: ignore[call-arg]


def _assert_json(output: str) -> None:
    (line,) = output.splitlines()
    entry = json.loads(line)
    assert entry["level"] == "info" and entry["logger"] == "portico.test"
    assert entry["msg"] == "signed in with Bearer [REDACTED]"
    assert entry["user"] == "ada" and entry["password"] == "[REDACTED]"


def _assert_text(output: str) -> None:
    (line,) = output.splitlines()
    assert not line.startswith("{")
    assert " INFO    portico.test signed in with Bearer [REDACTED] " in line
    assert line.endswith("user=ada password=[REDACTED]")
    assert "hunter2" not in line and "abc.def" not in line


def test_json_format_writes_one_redacted_object_per_line_even_on_a_terminal() -> None:
    _assert_json(_emit("json", Terminal()))


def test_text_format_writes_one_readable_redacted_line_even_to_a_pipe() -> None:
    _assert_text(_emit("text", io.StringIO()))


def test_auto_format_is_text_on_a_terminal_and_json_elsewhere() -> None:
    _assert_text(_emit("auto", Terminal()))
    _assert_json(_emit("auto", io.StringIO()))


def test_text_lines_carry_the_request_id_and_the_traceback() -> None:
    stream = io.StringIO()
    configure_logging("INFO", log_format="text", stream=stream)
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("portico.test").exception("failed", extra={"request_id": "r-1"})
    first, *rest = stream.getvalue().splitlines()
    assert first.endswith("ERROR   portico.test [r-1] failed")
    assert rest[0] == "Traceback (most recent call last):"
    assert rest[-1] == "RuntimeError: boom"


@pytest.mark.parametrize("value", ["auto", "text", "json"])
def test_the_format_comes_from_portico_log_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    settings = _settings(tmp_path, monkeypatch, PORTICO_LOG_FORMAT=value)
    assert settings.log_format == value
    assert settings.effective_log_format == value


def test_the_default_format_is_auto(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _settings(tmp_path, monkeypatch).effective_log_format == "auto"


def test_an_unknown_format_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="log_format"):
        _settings(tmp_path, monkeypatch, PORTICO_LOG_FORMAT="yaml")


@pytest.mark.parametrize(("legacy", "expected"), [("true", "json"), ("false", "text")])
def test_the_former_portico_log_json_still_decides_while_the_format_is_auto(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, legacy: str, expected: str
) -> None:
    settings = _settings(tmp_path, monkeypatch, PORTICO_LOG_JSON=legacy)
    assert settings.effective_log_format == expected
    # an explicit format wins over it
    explicit = "text" if expected == "json" else "json"
    overridden = _settings(
        tmp_path, monkeypatch, PORTICO_LOG_JSON=legacy, PORTICO_LOG_FORMAT=explicit
    )
    assert overridden.effective_log_format == explicit
