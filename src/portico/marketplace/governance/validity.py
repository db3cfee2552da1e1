"""Is the document valid OpenAPI? Asked of openapi-spec-validator (the maintained validator
of the python-openapi project), with what a server needs around it:

* no reference is fetched: the validator's resolver handlers are taken away, so a ``$ref``
  to a URL or a file is an error of the document, never a request from this process (the
  catalogue's documents are bundled: their references are local);
* the validator caches, per instance and for ever, the errors of every document it saw
  (``functools.lru_cache`` on a method): the cache is emptied after each document, or a
  long-running worker would keep every document it linted;
* CPU-bound (about 1.5 s for a 300 kB document of 68 paths, measured here): callers run it
  in a thread (the linting job does).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from jsonschema_path.handlers.urllib import UrllibHandler
from openapi_spec_validator.validation.validators import (
    OpenAPIV30SpecValidator,
    OpenAPIV31SpecValidator,
    OpenAPIV32SpecValidator,
    SpecValidator,
)

from portico.core.validation import json_pointer

#: errors reported per document: past a few, they mostly repeat one mistake
MAX_ERRORS = 10
MAX_MESSAGE = 300
_NO_HANDLERS: dict[str, UrllibHandler] = {}


class _V30(OpenAPIV30SpecValidator):
    resolver_handlers = _NO_HANDLERS


class _V31(OpenAPIV31SpecValidator):
    resolver_handlers = _NO_HANDLERS


class _V32(OpenAPIV32SpecValidator):
    resolver_handlers = _NO_HANDLERS


_BY_VERSION: dict[str, type[SpecValidator]] = {"3.0": _V30, "3.1": _V31, "3.2": _V32}
#: the validator's cache is shared by every instance: emptied under a lock, after each use
_LOCK = threading.Lock()


def errors(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """At most :data:`MAX_ERRORS` (JSON pointer, message) pairs; none for a valid document."""
    version = document.get("openapi")
    validator = _BY_VERSION.get(version[:3]) if isinstance(version, str) else None
    if validator is None:
        found = document.get("openapi", document.get("swagger"))
        return [("/openapi", f"not an OpenAPI 3.0, 3.1 or 3.2 document (openapi: {found!r})")]
    out: list[tuple[str, str]] = []
    with _LOCK:
        try:
            for error in validator(dict(document)).iter_errors():
                path = getattr(error, "absolute_path", None) or ()
                message = str(getattr(error, "message", error)).split("\n", 1)[0]
                out.append((json_pointer(list(path)), _short(message)))
                if len(out) >= MAX_ERRORS:
                    break
        # the validator raises rather than reports on some malformed documents (a reference
        # it cannot resolve): the document is then invalid, for that reason
        except Exception as error:
            out.append(("", f"the document cannot be validated: {_reason(error)}"))
        finally:
            _clear_cache()
    return out


def _clear_cache() -> None:
    cached = getattr(SpecValidator.iter_errors, "__wrapped__", None)
    clear = getattr(cached, "cache_clear", None)
    if clear is not None:
        clear()


def _short(message: str) -> str:
    """jsonschema's messages quote the instance at fault, which may be a large part of the
    document: cut to what a reader needs."""
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"


def _reason(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__
