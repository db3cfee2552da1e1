"""An uploaded OpenAPI document (JSON or YAML text, or an already-parsed object) → the JSON
object it stands for, or a refusal naming where it went wrong.

The reading half of the management service's import
(:mod:`portico.management.api.openapi_import` converts what this returns); the marketplace's
``openapi`` connector reads the documents it fetches with it too, hence its place in the
kernel. Checked here: the size (at most 5 MiB, refused before
parsing), the nesting depth, that the text is JSON or YAML holding an object, and that every
key and string is text JSON can carry.

YAML is read with PyYAML's safe loader only, and without anchors or aliases: an alias makes a
small text expand into a huge document ("billion laughs"), and OpenAPI documents do not need
them. Timestamps stay the strings they were written as (``version: 2024-01-01``), and integer
mapping keys (``200:`` under ``responses``) become strings, as in the JSON form of the same
document.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import Any, NoReturn

import yaml

from portico.core.errors import ValidationFailed
from portico.core.validation import Loc, json_pointer

try:
    from yaml import CSafeLoader as _SafeLoader

    _LIBYAML = True
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

    _LIBYAML = False

#: larger documents are refused before they are parsed
MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
#: nesting of objects and arrays; real OpenAPI documents stay far below it
MAX_DEPTH = 128

_MIB = 1024 * 1024
_JSON_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


# --------------------------------------------------------------------------------------------
# Parsing


def parse_document(raw: bytes | str | Mapping[str, Any]) -> dict[str, Any]:
    """The document as a JSON object, from already-parsed JSON or from JSON or YAML text.

    The result is a fresh ``dict`` holding only JSON values (safe to store as JSON/JSONB).
    CPU-bound: JSON near the 5 MiB limit takes about half a second, YAML a few seconds
    (libyaml; PyYAML's pure-Python parser is slower), so an endpoint runs it in a worker
    thread rather than on the event loop.
    """
    if isinstance(raw, Mapping):
        return _normalize(raw)
    if isinstance(raw, bytes | bytearray):
        _check_size(len(raw))
        try:
            text = bytes(raw).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            refuse("", f"not valid JSON or YAML: the document is not UTF-8 text ({exc.reason})")
    elif isinstance(raw, str):
        _check_size(len(raw))  # every character is at least one byte
        try:
            _check_size(len(raw.encode("utf-8")))
        except UnicodeEncodeError:
            refuse("", "not valid JSON or YAML: the document is not valid Unicode text")
        text = raw.removeprefix("\ufeff")
    else:
        refuse(
            "",
            "the document must be an OpenAPI document (a JSON object) "
            f"or its text in JSON or YAML, not {_kind(raw)}",
        )
    value = _parse_text(text)
    if not isinstance(value, dict):
        refuse("", f"the document must be a JSON object, not {_kind(value)}")
    return _normalize(value)


def _check_size(size: int) -> None:
    if size > MAX_DOCUMENT_BYTES:
        refuse(
            "",
            f"the document is larger than {MAX_DOCUMENT_BYTES // _MIB} MiB "
            f"({size} bytes); split it or remove what the gateway does not need",
        )


def _parse_text(text: str) -> Any:
    """JSON if it looks like JSON and parses as such, else YAML (of which JSON is nearly a
    subset). When both fail, the error reported is the one of the format the text looks like.
    """
    json_error: str | None = None
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text, parse_constant=_refuse_constant)
        except RecursionError:
            _too_deep()
        except ValueError as exc:  # JSONDecodeError, or an integer of more than 4300 digits
            json_error = (
                f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
                if isinstance(exc, json.JSONDecodeError)
                else str(exc)
            )
    try:
        return _load_yaml(text)
    except ValidationFailed:
        if json_error is None:
            raise
        refuse("", f"not valid JSON or YAML: {json_error}")


def _refuse_constant(name: str) -> NoReturn:
    refuse("", f"not valid JSON or YAML: {name} is not a JSON number")


class _DocumentLoader(_SafeLoader):
    """PyYAML's safe loader, with timestamps kept as the strings they were written as."""


def _construct_timestamp(loader: _DocumentLoader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


_DocumentLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)


def _load_yaml(text: str) -> Any:
    _scan_yaml(text)
    try:
        loader = _DocumentLoader(text)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        refuse("", f"not valid JSON or YAML: {_yaml_problem(exc)}")
    except Exception as exc:
        # Any other failure of the YAML library on the input text: PyYAML's constructors
        # raise ValueError, KeyError, IndexError … on odd explicitly tagged scalars
        # (``!!int _``, ``!!bool x``); each means the text is not valid YAML.
        reason = shorten(str(exc) or type(exc).__name__)
        refuse("", f"not valid JSON or YAML: a value does not fit its YAML type ({reason})")


def _scan_yaml(text: str) -> None:
    """Refuse anchors, aliases and deep nesting before anything is built.

    libyaml's event parser keeps its own stack, so this pass is cheap and cannot overflow;
    composing and constructing afterwards is then bounded by the size of the text.
    """
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_SafeLoader):
            if isinstance(event, yaml.AliasEvent) or (
                isinstance(event, yaml.NodeEvent) and event.anchor is not None
            ):
                refuse(
                    "",
                    "YAML anchors and aliases are not supported "
                    f"({_where(event.start_mark)}); write the content out in full",
                )
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    _too_deep()
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        refuse("", f"not valid JSON or YAML: {_yaml_problem(exc)}")
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        refuse("", f"not valid JSON or YAML: {_reader_problem(exc, text)}")
    except yaml.YAMLError as exc:
        refuse("", f"not valid JSON or YAML: {shorten(str(exc), 200)}")


def _reader_problem(exc: yaml.reader.ReaderError, text: str) -> str:
    index = int(exc.position)
    if _LIBYAML:  # libyaml counts UTF-8 bytes, not characters
        index = len(text.encode("utf-8")[:index].decode("utf-8", "ignore"))
    line = text.count("\n", 0, index) + 1
    column = index - text.rfind("\n", 0, index)
    character = f"U+{exc.character:04X}" if isinstance(exc.character, int) else "a character"
    return f"{character} is not allowed in YAML (line {line}, column {column})"


def _yaml_problem(exc: yaml.MarkedYAMLError) -> str:
    problem = exc.problem or exc.context or "invalid document"
    mark = exc.problem_mark or exc.context_mark
    return f"{problem} ({_where(mark)})" if mark is not None else problem


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _too_deep() -> NoReturn:
    refuse("", f"the document is nested more than {MAX_DEPTH} levels deep")


def _normalize(value: Mapping[Any, Any]) -> dict[str, Any]:
    """A fresh copy of ``value`` holding only JSON values, within the size and depth limits.

    The usual case runs in the json module's C code (serialise, check, parse back); when that
    finds anything amiss, :func:`_to_json` walks the value to name the place, or to convert
    what JSON would (mappings that are not ``dict``).
    """
    try:
        text: str | None = _dumps(value)
    except (TypeError, ValueError, RecursionError):  # not JSON, NaN, a cycle, too deep
        text = None
    if text is None or not _plain(text):
        text = _dumps(_to_json_object(value, (), 0))
    _check_size(len(text.encode("utf-8")))
    document: dict[str, Any] = json.loads(text)
    return document


def _plain(text: str) -> bool:
    """``text`` (from :func:`_dumps`) is storable as is: UTF-8, no U+0000, not too deep."""
    if "\\u0000" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    brackets = _NOT_BRACKETS.sub("", _JSON_STRINGS.sub("", text))
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0) <= MAX_DEPTH


def _to_json(value: Any, loc: Loc, depth: int) -> Any:
    """A copy of ``value`` holding only JSON values; anything else is refused at its place."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, str):
        _check_text(value, loc)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            refuse(json_pointer(loc), f"{value} is not a JSON number")
        return value
    if isinstance(value, Mapping):
        return _to_json_object(value, loc, depth)
    if isinstance(value, list | tuple):
        if depth >= MAX_DEPTH:
            _too_deep()
        return [_to_json(item, (*loc, index), depth + 1) for index, item in enumerate(value)]
    refuse(json_pointer(loc), f"a {type(value).__name__} value cannot be stored as JSON")


def _to_json_object(value: Mapping[Any, Any], loc: Loc, depth: int) -> dict[str, Any]:
    if depth >= MAX_DEPTH:
        _too_deep()
    out: dict[str, Any] = {}
    for raw_key, item in value.items():
        key = _json_key(raw_key, loc)  # ``1`` and ``"1"``: the last wins, as in JSON
        out[key] = _to_json(item, (*loc, key), depth + 1)
    return out


def _json_key(key: Any, loc: Loc) -> str:
    """Mapping keys as JSON writes them: YAML's ``200:`` is the key ``"200"``."""
    if isinstance(key, str):
        _check_text(key, loc)
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, int) or (isinstance(key, float) and math.isfinite(key)):
        return str(key)
    refuse(json_pointer(loc), f"a {type(key).__name__} cannot be an object key in JSON")


def _check_text(text: str, loc: Loc) -> None:
    # A lone surrogate cannot be encoded for storage, and PostgreSQL's JSONB refuses U+0000.
    if "\x00" in text:
        refuse(json_pointer(loc), "text must not contain the character U+0000")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            refuse(json_pointer(loc), "text must not contain unpaired surrogate characters")


def _dumps(document: Any) -> str:
    return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


# --------------------------------------------------------------------------------------------
# Helpers


def refuse(pointer: str, detail: str) -> NoReturn:
    raise ValidationFailed.at(pointer, detail)


def shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"
