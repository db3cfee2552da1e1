"""Making an OpenAPI document self-contained: every ``$ref`` that leaves it is brought in.

A document served at a URL may refer to others (``$ref: schemas/pet.yaml``,
``$ref: common.json#/components/schemas/Error``, an absolute URL). The catalogue stores one
document per API and the portal renders it without fetching anything, so an import bundles
them, as ``swagger-cli bundle`` does:

* a reference to a component of another document (``…#/components/<type>/<name>``, or a
  Swagger-style ``#/definitions/<name>`` or ``#/$defs/<name>``) becomes a component of the
  stored document (``#/components/<type>/<name>``, the name suffixed ``_2``, ``_3``… when
  taken) and the reference points at it; each target is brought in once however often it is
  referred to, which also ends cycles (``Pet.children: [Pet]``);
* a whole other document in the place of a schema (under ``schema``, ``items``,
  ``properties``…) becomes a schema component named after its file;
* anything else (a path item in its own file, a fragment that is not a component) is
  written in place, resolved in turn; a cycle through such places cannot be written out and
  is refused.

References inside the stored document (``#/components/schemas/Pet``) stay as they are, but
each must point at something. Every document is fetched through the same :class:`Outbound`
as the first, so the SSRF guard checks each reference's address (a ``$ref`` to a metadata
address or a ``file:`` URL is refused like a connection to it), and the work is bounded: at
most :data:`MAX_DOCUMENTS` documents, :data:`MAX_REFS` references and
:data:`MAX_INLINE_DEPTH` references written inside one another. Any failure is a
:class:`ConnectorError` naming the reference and the document it is in.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from portico.core.errors import ValidationFailed
from portico.core.openapi_document import parse_document
from portico.marketplace.connectors.base import ConnectorError

#: other documents fetched for one document, at most
MAX_DOCUMENTS = 50
#: references resolved for one document, at most (each copy written in place counts again)
MAX_REFS = 10_000
#: references written in place inside one another, at most
MAX_INLINE_DEPTH = 32
#: nesting of the result (the reader allows 128 per document; written-in-place ones add up)
MAX_DEPTH = 256

COMPONENT_TYPES = frozenset(
    {
        "schemas",
        "responses",
        "parameters",
        "examples",
        "requestBodies",
        "headers",
        "securitySchemes",
        "links",
        "callbacks",
        "pathItems",
    }
)
_COMPONENT = re.compile(r"^/components/([A-Za-z]+)/([^/]+)$")
_SCHEMA_DEFINITION = re.compile(r"^/(?:definitions|\$defs)/([^/]+)$")
#: keys whose value is a schema, and keys whose value maps names (or lists) to schemas
_SCHEMA_KEYS = frozenset(
    {
        "schema",
        "items",
        "additionalProperties",
        "not",
        "contains",
        "if",
        "then",
        "else",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
        "contentSchema",
    }
)
_SCHEMA_MAPS = frozenset(
    {
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
        "allOf",
        "anyOf",
        "oneOf",
        "prefixItems",
    }
)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")

#: fetches a document: URL → its parsed JSON object (or ConnectorError)
Fetch = Callable[[str], Awaitable[dict[str, Any]]]
Path = tuple[str | int, ...]
Target = tuple[str, str]  # (document URL, JSON pointer)


async def bundle(document: dict[str, Any], url: str, fetch: Fetch) -> dict[str, Any]:
    """``document`` (served at ``url``) with every reference that leaves it brought in."""
    if not _leaves(document):  # the usual case: nothing to fetch, only local checks
        _check_local_refs(document, document)
        return document
    return await _Bundler(document, url, fetch).run()


def _leaves(value: Any) -> bool:
    """Whether any ``$ref`` in ``value`` points outside the document."""
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return True
        return any(_leaves(v) for v in value.values())
    if isinstance(value, list):
        return any(_leaves(v) for v in value)
    return False


def _check_local_refs(value: Any, root: dict[str, Any]) -> None:
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            _pointer(root, ref[1:], f"$ref {ref!r}")
        for item in value.values():
            _check_local_refs(item, root)
    elif isinstance(value, list):
        for item in value:
            _check_local_refs(item, root)


class _Bundler:
    def __init__(self, root: dict[str, Any], url: str, fetch: Fetch) -> None:
        self.root_url = _without_fragment(url)
        self.root = root
        self.fetch = fetch
        self.documents: dict[str, dict[str, Any]] = {self.root_url: root}
        #: each target brought in as a component → its local reference
        self.brought: dict[Target, str] = {}
        self.added: dict[str, dict[str, Any]] = {}
        components = root.get("components")
        self.taken: dict[str, set[str]] = {
            kind: set(names)
            for kind, names in (components.items() if isinstance(components, dict) else ())
            if isinstance(names, dict)
        }
        #: components still to resolve: (type, name, document URL, its content)
        self.pending: list[tuple[str, str, str, Any]] = []
        self.refs = 0

    async def run(self) -> dict[str, Any]:
        out: dict[str, Any] = await self.walk(self.root, self.root_url, (), ())
        while self.pending:
            kind, name, url, value = self.pending.pop(0)
            resolved = await self.walk(value, url, ("components", kind, name), ())
            self.added.setdefault(kind, {})[name] = resolved
        if self.added:
            components = out.setdefault("components", {})
            if not isinstance(components, dict):
                raise ConnectorError("'components' is not an object")
            for kind, entries in self.added.items():
                existing = components.setdefault(kind, {})
                if not isinstance(existing, dict):
                    raise ConnectorError(f"'components.{kind}' is not an object")
                existing.update(entries)
        return out

    async def walk(self, value: Any, base: str, path: Path, stack: tuple[Target, ...]) -> Any:
        if len(path) > MAX_DEPTH:
            raise ConnectorError(f"the document nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, list):
            return [await self.walk(v, base, (*path, i), stack) for i, v in enumerate(value)]
        if not isinstance(value, dict):
            return value
        ref = value.get("$ref")
        if isinstance(ref, str):
            return await self.reference(value, ref, base, path, stack)
        return {k: await self.walk(v, base, (*path, k), stack) for k, v in value.items()}

    async def reference(
        self,
        holder: dict[str, Any],
        ref: str,
        base: str,
        path: Path,
        stack: tuple[Target, ...],
    ) -> Any:
        self.refs += 1
        if self.refs > MAX_REFS:
            raise ConnectorError(f"more than {MAX_REFS} $refs to resolve")
        where = f"$ref {ref!r} in {base}"
        address, _, fragment = ref.partition("#")
        pointer = unquote(fragment)
        url = _without_fragment(urljoin(base, address)) if address else base
        siblings = {k: v for k, v in holder.items() if k != "$ref"}
        if url == self.root_url:  # into the stored document: kept, once checked
            _pointer(self.root, pointer, where)
            local = {"$ref": f"#{fragment}"}
            return local | {
                k: await self.walk(v, base, (*path, k), stack) for k, v in siblings.items()
            }
        target: Target = (url, pointer)
        if target in self.brought:
            return {"$ref": self.brought[target]}
        document = await self.document(url, where)
        content = _pointer(document, pointer, where)
        kind, name = _component_of(pointer, url, path)
        if kind is not None:
            unique = self.unique(kind, name)
            self.brought[target] = f"#/components/{kind}/{_escape(unique)}"
            self.pending.append((kind, unique, url, copy.deepcopy(content)))
            return {"$ref": self.brought[target]}
        if target in stack:
            raise ConnectorError(
                f"{where} is part of a cycle of references that cannot be written out"
            )
        if len(stack) >= MAX_INLINE_DEPTH:
            raise ConnectorError(f"{where}: references nest deeper than {MAX_INLINE_DEPTH}")
        return await self.walk(copy.deepcopy(content), url, path, (*stack, target))

    async def document(self, url: str, where: str) -> dict[str, Any]:
        if url in self.documents:
            return self.documents[url]
        if len(self.documents) > MAX_DOCUMENTS:  # the first is the stored document
            raise ConnectorError(f"{where}: more than {MAX_DOCUMENTS} documents referred to")
        try:
            document: dict[str, Any] = await self.fetch(url)
        except ConnectorError as failed:
            raise ConnectorError(f"{where}: {failed.message}") from None
        self.documents[url] = document
        return document

    def unique(self, kind: str, name: str) -> str:
        taken = self.taken.setdefault(kind, set())
        candidate, n = name, 1
        while candidate in taken:
            n += 1
            candidate = f"{name}_{n}"
        taken.add(candidate)
        return candidate


def _component_of(pointer: str, url: str, path: Path) -> tuple[str | None, str]:
    """The component type and name a target is brought in as, or (None, "") to write it in
    place."""
    found = _COMPONENT.match(pointer)
    if found and found.group(1) in COMPONENT_TYPES:
        return found.group(1), _safe(_unescape(found.group(2)))
    found = _SCHEMA_DEFINITION.match(pointer)
    if found:
        return "schemas", _safe(_unescape(found.group(1)))
    if pointer in ("", "/") and _schema_position(path):
        stem = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1].split(".", 1)[0]
        return "schemas", _safe(stem) or "Schema"
    return None, ""


def _schema_position(path: Path) -> bool:
    """Whether the value at ``path`` is a schema (as far as the keys above it say)."""
    if len(path) >= 3 and path[0] == "components" and path[1] == "schemas":
        return True
    if not path:
        return False
    last = path[-1]
    if isinstance(last, str) and last in _SCHEMA_KEYS:
        return True
    parent = path[-2] if len(path) >= 2 else None
    return isinstance(parent, str) and parent in _SCHEMA_MAPS


def _pointer(document: Any, pointer: str, where: str) -> Any:
    """The value at JSON pointer ``pointer`` (RFC 6901) in ``document``."""
    if pointer in ("", "/"):
        return document
    if not pointer.startswith("/"):
        raise ConnectorError(f"{where}: the fragment is not a JSON pointer")
    value = document
    for raw in pointer[1:].split("/"):
        token = _unescape(raw)
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            raise ConnectorError(f"{where} points at nothing")
    return value


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _safe(name: str) -> str:
    """A component name OpenAPI accepts (``^[a-zA-Z0-9.\\-_]+$``)."""
    return _UNSAFE_NAME.sub("_", name).strip("_")[:100]


def _without_fragment(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


def read_document(body: bytes, url: str) -> dict[str, Any]:
    """A referred-to document (JSON or YAML), read as the first one is."""
    try:
        return parse_document(body)
    except ValidationFailed as refused:
        raise ConnectorError(f"{url} cannot be read: {refused.detail}") from None
