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
  ``x-helix-gateway``, the seed product's vendor extension, is read exactly the same way
  (both in one place is refused): the seed's names of plugins Portico names otherwise
  (``helix-auth`` → ``edge-auth``, ``api-product-enforcer`` → ``product-quota``) are stored
  under Portico's, and keys starting with ``_`` in its plugin blocks (``_meta``, comments)
  are dropped; :class:`ImportedApi` lists both for the import's answer.

Reading the upload (JSON or YAML, size and depth limits) is
:mod:`portico.management.api.openapi_document`'s part.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from portico.core.errors import ValidationFailed
from portico.core.openapi_document import (
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    parse_document,
    refuse,
    shorten,
)
from portico.core.validation import Loc, json_pointer
from portico.gateway.plugins.registry import canonical_name, canonical_plugins

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

MAX_NAME_LENGTH = 100
MAX_DESC_LENGTH = 256
#: the exact wording the seed and the management API contract quote
DESC_TOO_LONG = f"desc: must be at most {MAX_DESC_LENGTH} characters long"
#: the fixed fields of a Path Item Object that are operations, in OpenAPI's order
OPERATION_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

_PATH_ITEM_FIELDS = frozenset({"summary", "description", "servers", "parameters"})
_EXTENSION = "x-portico"
#: the seed product's vendor extension, read exactly as ``x-portico``
_SEED_EXTENSION = "x-helix-gateway"
_EXTENSIONS = (_EXTENSION, _SEED_EXTENSION)
_EXTENSION_FIELDS = ("plugins",)
_VERSION = re.compile(r"3\.[01]\.[0-9]+", re.ASCII)
_TEMPLATE = re.compile(r"\{([^{}]*)\}")
_MAX_ERRORS = 100


@dataclass(frozen=True)
class ImportedApi:
    """What an import creates: the API, revision 1's specs and the stored document."""

    name: str
    desc: str
    service_spec: dict[str, Any]
    route_spec: list[dict[str, Any]]
    document: dict[str, Any]
    #: every plugin stored under another name than the document's: ``{pointer, from, to}``
    renamed: list[dict[str, str]] = dataclasses.field(default_factory=list)
    #: the ``_``-keys of ``x-helix-gateway`` plugin blocks left out (their pointers)
    dropped: list[str] = dataclasses.field(default_factory=list)


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
            refuse(
                "/swagger",
                f"only OpenAPI 3.x documents can be imported; this is Swagger {shorten(shown)}",
            )
        refuse("/openapi", "required property 'openapi' not found")
    version = doc["openapi"]
    if not isinstance(version, str):
        refuse("/openapi", 'openapi: must be a string such as "3.1.0"')
    if not _VERSION.fullmatch(version):
        refuse(
            "/openapi",
            "only OpenAPI 3.0.x and 3.1.x documents can be imported; "
            f"this is openapi {shorten(repr(version))}",
        )


class _Converter:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.errors: list[dict[str, str]] = []
        #: operationId → pointer of the operation that uses it first
        self.operation_ids: dict[str, str] = {}
        #: plugins named as the seed product names them: ``{pointer, from, to}``
        self.renamed: list[dict[str, str]] = []
        #: pointers of the ``_``-keys dropped from ``x-helix-gateway`` plugin blocks
        self.dropped: list[str] = []

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
            renamed=self.renamed,
            dropped=self.dropped,
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

    # ---- x-portico and x-helix-gateway

    def plugins(self, owner: dict[str, Any], loc: Loc) -> dict[str, Any]:
        """The ``plugins`` of the document root's or an operation's extension (``{}`` if
        none): ``x-portico``, or the seed product's ``x-helix-gateway`` read the same way
        (its plugin names under Portico's, its ``_``-keys dropped); not both."""
        present = [name for name in _EXTENSIONS if owner.get(name) is not None]
        if len(present) > 1:
            self.fail(
                (*loc, present[1]),
                f"{present[0]} and {present[1]} are both present here: they are read the same "
                "way; keep one",
            )
            return {}
        if not present:  # absent, or YAML's empty ``x-portico:``
            return {}
        extension_name = present[0]
        extension = owner[extension_name]
        xloc = (*loc, extension_name)
        if not isinstance(extension, dict):
            self.fail(xloc, f"{extension_name}: must be an object")
            return {}
        for key in extension:
            if key not in _EXTENSION_FIELDS:
                self.fail(
                    (*xloc, key),
                    f"{extension_name}: unknown property {shorten(repr(key))}; "
                    "only 'plugins' is supported",
                )
        plugins = extension.get("plugins")
        if plugins is None:  # absent, or YAML's empty ``plugins:``
            return {}
        ploc = (*xloc, "plugins")
        if not isinstance(plugins, dict):
            self.fail(ploc, "plugins: must be an object of plugin name to configuration")
            return {}
        seed = extension_name == _SEED_EXTENSION
        out: dict[str, Any] = {}
        for name, config in plugins.items():
            if not name.strip():
                self.fail((*ploc, name), "plugin names must not be empty")
            elif config is None:  # YAML's ``key-auth:`` with nothing after it
                out[name] = {}
            elif not isinstance(config, dict):
                self.fail((*ploc, name), f"{shorten(name)}: plugin configuration must be an object")
            elif seed:
                out[name] = self.seed_config(config, (*ploc, name))
            else:
                out[name] = copy.deepcopy(config)
        canonical, conflicts = canonical_plugins(out)
        for conflict in conflicts:
            self.fail(ploc, conflict)
        for name in out:
            if canonical_name(name) != name:
                self.renamed.append(
                    {
                        "pointer": json_pointer((*ploc, name)),
                        "from": name,
                        "to": canonical_name(name),
                    }
                )
        return canonical

    def seed_config(self, config: dict[str, Any], loc: Loc) -> dict[str, Any]:
        """A plugin block of ``x-helix-gateway`` without its ``_``-keys (the seed product's
        ``_meta``, comments): dropped and reported, not refused."""
        kept: dict[str, Any] = {}
        for key, value in config.items():
            if key.startswith("_"):
                self.dropped.append(json_pointer((*loc, key)))
            else:
                kept[key] = copy.deepcopy(value)
        return kept

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
            self.fail(loc, f"path {shorten(repr(path))} must start with '/'")
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
            elif key in _EXTENSIONS:
                self.fail(
                    (*loc, key),
                    f"{key} is read on the document root and on operations, not on a path item",
                )
            elif key not in _PATH_ITEM_FIELDS and not key.startswith("x-"):
                self.fail(
                    (*loc, key),
                    f"unknown path item property {shorten(repr(key))}; operations are "
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
                    self.fail(loc, f"path parameter {shorten(repr(param))} appears twice")
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
                f"operationId {shorten(repr(value))} is not unique: the operation at {first} "
                "uses it too",
            )
        return value
