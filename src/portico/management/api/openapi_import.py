"""OpenAPI 3.x document → what Portico stores for an imported API.

A pure converter: no HTTP, no database. ``POST /api/orgs/{orgId}/apis/from-spec`` (and its
alias ``import-openapi``) reads the upload, calls :func:`parse_document` and then
:func:`convert`, and stores the :class:`ImportedApi` it gets back: the API's name and
description, revision 1's ``serviceSpec`` and ``routeSpec``, and the document itself (served
back by ``GET …/apis/{apiId}/spec``).

Every refusal is a :class:`~portico.core.errors.ValidationFailed` whose ``errors`` carry RFC 6901
pointers relative to the document's root (``/paths/~1pets~1{petId}/get/summary``); a problem
with the document as a whole (not JSON or YAML, too large, not an object) is at ``""``. A
caller that received the document inside a request body (``{"spec": …}``) prefixes its own
location.

What is checked is what the conversion relies on, not the whole OpenAPI schema:

* ``openapi`` is ``3.0.x`` or ``3.1.x`` (a Swagger 2.0 document is named as such);
* ``info.title`` becomes the API's name (trimmed, 1 to 100 characters) and
  ``info.description`` its ``desc`` (at most 256 characters);
* ``paths`` is an object of path items whose keys start with ``/``; a path item's
  operations (``get`` … ``trace``) become one route each, in document order; a path item
  ``$ref`` is not supported;
* ``x-portico`` (document root and operations only) holds ``plugins``: plugin name → config.
  Configs are not validated here; deploy runs every plugin's own validation (seed).

YAML is read with PyYAML's safe loader only, and without anchors or aliases: an alias makes a
small text expand into a huge document ("billion laughs"), and OpenAPI documents do not need
them. Timestamps stay the strings they were written as (``version: 2024-01-01``), and integer
mapping keys (``200:`` under ``responses``) become strings, as in the JSON form of the same
document.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
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

__all__ = [
    "DESC_TOO_LONG",
    "MAX_DEPTH",
    "MAX_DESC_LENGTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_NAME_LENGTH",
    "OPERATION_METHODS",
    "ImportedApi",
    "convert",
    "parse_document",
]

#: larger documents are refused before they are parsed
MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
#: nesting of objects and arrays; real OpenAPI documents stay far below it
MAX_DEPTH = 128
MAX_NAME_LENGTH = 100
MAX_DESC_LENGTH = 256
#: the exact wording the seed and the management API contract quote
DESC_TOO_LONG = f"desc: must be at most {MAX_DESC_LENGTH} characters long"
#: the fixed fields of a Path Item Object that are operations, in OpenAPI's order
OPERATION_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

_PATH_ITEM_FIELDS = frozenset({"summary", "description", "servers", "parameters"})
_EXTENSION = "x-portico"
_EXTENSION_FIELDS = ("plugins",)
_VERSION = re.compile(r"3\.[01]\.[0-9]+", re.ASCII)
_TEMPLATE = re.compile(r"\{([^{}]*)\}")
_MAX_ERRORS = 100
_MIB = 1024 * 1024
_JSON_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


@dataclass(frozen=True)
class ImportedApi:
    """What an import creates: the API, revision 1's specs and the stored document."""

    name: str
    desc: str
    service_spec: dict[str, Any]
    route_spec: list[dict[str, Any]]
    document: dict[str, Any]


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
            _refuse("", f"not valid JSON or YAML: the document is not UTF-8 text ({exc.reason})")
    elif isinstance(raw, str):
        _check_size(len(raw))  # every character is at least one byte
        try:
            _check_size(len(raw.encode("utf-8")))
        except UnicodeEncodeError:
            _refuse("", "not valid JSON or YAML: the document is not valid Unicode text")
        text = raw.removeprefix("\ufeff")
    else:
        _refuse(
            "",
            "the document must be an OpenAPI document (a JSON object) "
            f"or its text in JSON or YAML, not {_kind(raw)}",
        )
    value = _parse_text(text)
    if not isinstance(value, dict):
        _refuse("", f"the document must be a JSON object, not {_kind(value)}")
    return _normalize(value)


def _check_size(size: int) -> None:
    if size > MAX_DOCUMENT_BYTES:
        _refuse(
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
        _refuse("", f"not valid JSON or YAML: {json_error}")


def _refuse_constant(name: str) -> NoReturn:
    _refuse("", f"not valid JSON or YAML: {name} is not a JSON number")


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
        _refuse("", f"not valid JSON or YAML: {_yaml_problem(exc)}")
    except Exception as exc:
        # Any other failure of the YAML library on the input text: PyYAML's constructors
        # raise ValueError, KeyError, IndexError … on odd explicitly tagged scalars
        # (``!!int _``, ``!!bool x``); each means the text is not valid YAML.
        reason = _short(str(exc) or type(exc).__name__)
        _refuse("", f"not valid JSON or YAML: a value does not fit its YAML type ({reason})")


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
                _refuse(
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
        _refuse("", f"not valid JSON or YAML: {_yaml_problem(exc)}")
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        _refuse("", f"not valid JSON or YAML: {_reader_problem(exc, text)}")
    except yaml.YAMLError as exc:
        _refuse("", f"not valid JSON or YAML: {_short(str(exc), 200)}")


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
    _refuse("", f"the document is nested more than {MAX_DEPTH} levels deep")


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
            _refuse(json_pointer(loc), f"{value} is not a JSON number")
        return value
    if isinstance(value, Mapping):
        return _to_json_object(value, loc, depth)
    if isinstance(value, list | tuple):
        if depth >= MAX_DEPTH:
            _too_deep()
        return [_to_json(item, (*loc, index), depth + 1) for index, item in enumerate(value)]
    _refuse(json_pointer(loc), f"a {type(value).__name__} value cannot be stored as JSON")


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
    _refuse(json_pointer(loc), f"a {type(key).__name__} cannot be an object key in JSON")


def _check_text(text: str, loc: Loc) -> None:
    # A lone surrogate cannot be encoded for storage, and PostgreSQL's JSONB refuses U+0000.
    if "\x00" in text:
        _refuse(json_pointer(loc), "text must not contain the character U+0000")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            _refuse(json_pointer(loc), "text must not contain unpaired surrogate characters")


def _dumps(document: Any) -> str:
    return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


# --------------------------------------------------------------------------------------------
# Conversion


def convert(document: Mapping[str, Any]) -> ImportedApi:
    """Validate an OpenAPI 3.x document and build the API, its specs and the document to store.

    All problems found are reported together (up to 100), in document order; a document that
    is not OpenAPI 3.0/3.1 is refused on that alone.
    """
    doc = parse_document(document)
    _check_version(doc)
    return _Converter(doc).run()


def _check_version(doc: Mapping[str, Any]) -> None:
    if "openapi" not in doc:
        if "swagger" in doc:
            swagger = doc["swagger"]
            shown = str(swagger) if isinstance(swagger, str | int | float) else "2.0"
            _refuse(
                "/swagger",
                f"only OpenAPI 3.x documents can be imported; this is Swagger {_short(shown)}",
            )
        _refuse("/openapi", "required property 'openapi' not found")
    version = doc["openapi"]
    if not isinstance(version, str):
        _refuse("/openapi", 'openapi: must be a string such as "3.1.0"')
    if not _VERSION.fullmatch(version):
        _refuse(
            "/openapi",
            "only OpenAPI 3.0.x and 3.1.x documents can be imported; "
            f"this is openapi {_short(repr(version))}",
        )


class _Converter:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.errors: list[dict[str, str]] = []
        #: operationId → pointer of the operation that uses it first
        self.operation_ids: dict[str, str] = {}

    def fail(self, loc: Loc, detail: str) -> None:
        self.errors.append({"pointer": json_pointer(loc), "detail": detail})

    def run(self) -> ImportedApi:
        name, desc = self.info()
        service_plugins = self.plugins(self.doc, ())
        routes = self.paths()
        if self.errors:
            raise ValidationFailed(self.errors[:_MAX_ERRORS])
        return ImportedApi(
            name=name,
            desc=desc,
            service_spec={"name": name, "desc": desc, "plugins": service_plugins},
            route_spec=routes,
            document=self.doc,
        )

    # ---- info

    def info(self) -> tuple[str, str]:
        if "info" not in self.doc:
            self.fail(("info",), "required property 'info' not found")
            return "", ""
        info = self.doc["info"]
        if not isinstance(info, dict):
            self.fail(("info",), "info: must be an object")
            return "", ""
        return self.title(info), self.text(info, ("info",), "description") or ""

    def title(self, info: dict[str, Any]) -> str:
        loc = ("info", "title")
        if "title" not in info:
            self.fail(loc, "required property 'title' not found")
            return ""
        title = info["title"]
        if not isinstance(title, str):
            self.fail(loc, "title: must be a string")
            return ""
        title = title.strip()
        if not title:
            self.fail(loc, "title: must not be empty")
        elif len(title) > MAX_NAME_LENGTH:
            self.fail(loc, f"title: must be at most {MAX_NAME_LENGTH} characters long")
        return title

    def text(self, owner: dict[str, Any], loc: Loc, field: str) -> str | None:
        """An optional description-like string, trimmed; ``None`` when absent or blank."""
        value = owner.get(field)
        if value is None:
            return None
        if not isinstance(value, str):
            self.fail((*loc, field), f"{field}: must be a string")
            return None
        value = value.strip()
        if len(value) > MAX_DESC_LENGTH:
            self.fail((*loc, field), DESC_TOO_LONG)
            return None
        return value or None

    # ---- x-portico

    def plugins(self, owner: dict[str, Any], loc: Loc) -> dict[str, Any]:
        """``x-portico.plugins`` of the document root or of an operation (``{}`` if none)."""
        extension = owner.get(_EXTENSION)
        if extension is None:  # absent, or YAML's empty ``x-portico:``
            return {}
        xloc = (*loc, _EXTENSION)
        if not isinstance(extension, dict):
            self.fail(xloc, "x-portico: must be an object")
            return {}
        for key in extension:
            if key not in _EXTENSION_FIELDS:
                self.fail(
                    (*xloc, key),
                    f"x-portico: unknown property {_short(repr(key))}; only 'plugins' is supported",
                )
        plugins = extension.get("plugins")
        if plugins is None:  # absent, or YAML's empty ``plugins:``
            return {}
        ploc = (*xloc, "plugins")
        if not isinstance(plugins, dict):
            self.fail(ploc, "plugins: must be an object of plugin name to configuration")
            return {}
        out: dict[str, Any] = {}
        for name, config in plugins.items():
            if not name.strip():
                self.fail((*ploc, name), "plugin names must not be empty")
            elif config is None:  # YAML's ``key-auth:`` with nothing after it
                out[name] = {}
            elif not isinstance(config, dict):
                self.fail((*ploc, name), f"{_short(name)}: plugin configuration must be an object")
            else:
                out[name] = copy.deepcopy(config)
        return out

    # ---- paths and operations

    def paths(self) -> list[dict[str, Any]]:
        if "paths" not in self.doc:
            self.fail(("paths",), "required property 'paths' not found")
            return []
        paths = self.doc["paths"]
        if not isinstance(paths, dict):
            self.fail(("paths",), "paths: must be an object")
            return []
        routes: list[dict[str, Any]] = []
        for path, item in paths.items():
            routes.extend(self.path_item(path, item))
        return routes

    def path_item(self, path: str, item: Any) -> list[dict[str, Any]]:
        loc = ("paths", path)
        if not path.startswith("/"):
            self.fail(loc, f"path {_short(repr(path))} must start with '/'")
            return []
        uri = self.uri(path, loc)
        if not isinstance(item, dict):
            self.fail(loc, "path item: must be an object")
            return []
        if "$ref" in item:
            self.fail((*loc, "$ref"), "path item $ref is not supported")
            return []
        routes: list[dict[str, Any]] = []
        for key, operation in item.items():
            if key in OPERATION_METHODS:
                route = self.operation(operation, (*loc, key), key.upper(), uri)
                if route is not None:
                    routes.append(route)
            elif key == _EXTENSION:
                self.fail(
                    (*loc, key),
                    "x-portico is read on the document root and on operations, not on a path item",
                )
            elif key not in _PATH_ITEM_FIELDS and not key.startswith("x-"):
                self.fail(
                    (*loc, key),
                    f"unknown path item property {_short(repr(key))}; operations are "
                    + ", ".join(OPERATION_METHODS),
                )
        return routes if uri is not None else []

    def uri(self, path: str, loc: Loc) -> str | None:
        """``/pets/{petId}`` → ``/pets/:petId``; ``None`` (with the error noted) if it cannot."""
        segments: list[str] = []
        seen: set[str] = set()
        for segment in path.split("/"):
            if "{" in segment or "}" in segment:
                match = _TEMPLATE.fullmatch(segment)
                if match is None:
                    self.fail(loc, "path templates must be whole segments")
                    return None
                param = match.group(1)
                if not param.strip():
                    self.fail(loc, "path templates must name a parameter")
                    return None
                if param in seen:
                    self.fail(loc, f"path parameter {_short(repr(param))} appears twice")
                    return None
                seen.add(param)
                segments.append(":" + param)
            elif segment.startswith(":"):
                # would read as a parameter once the path is a Portico URI
                self.fail(loc, "a literal path segment must not start with ':'")
                return None
            else:
                segments.append(segment)
        if path.endswith("*"):
            self.fail(
                loc, "a path must not end with '*' (a Portico URI reads it as a prefix match)"
            )
            return None
        return "/".join(segments)

    def operation(
        self, operation: Any, loc: Loc, method: str, uri: str | None
    ) -> dict[str, Any] | None:
        if not isinstance(operation, dict):
            self.fail(loc, "operation: must be an object")
            return None
        name = self.operation_id(operation, loc) or f"{method} {uri}"
        desc = self.operation_desc(operation, loc)
        plugins = self.plugins(operation, loc)
        if uri is None:
            return None
        route: dict[str, Any] = {"name": name, "uri": uri, "methods": [method], "plugins": plugins}
        if desc:
            route["desc"] = desc
        return route

    def operation_desc(self, operation: dict[str, Any], loc: Loc) -> str | None:
        """The summary, else the description; a faulty summary is reported, not skipped."""
        for field in ("summary", "description"):
            errors = len(self.errors)
            value = self.text(operation, loc, field)
            if len(self.errors) > errors:
                return None
            if value:
                return value
        return None

    def operation_id(self, operation: dict[str, Any], loc: Loc) -> str | None:
        value = operation.get("operationId")
        if value is None:
            return None
        idloc = (*loc, "operationId")
        if not isinstance(value, str):
            self.fail(idloc, "operationId: must be a string")
            return None
        if not value.strip():
            self.fail(idloc, "operationId: must not be empty")
            return None
        first = self.operation_ids.setdefault(value, json_pointer(loc))
        if first != json_pointer(loc):
            self.fail(
                idloc,
                f"operationId {_short(repr(value))} is not unique: the operation at {first} "
                "uses it too",
            )
        return value


# --------------------------------------------------------------------------------------------
# Helpers


def _refuse(pointer: str, detail: str) -> NoReturn:
    raise ValidationFailed.at(pointer, detail)


def _short(text: str, limit: int = 80) -> str:
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
