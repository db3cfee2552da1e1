"""Reading an OpenAPI document for the rules: its operations, its parameters (local ``$ref``
resolved), and every schema it declares, each with the JSON pointer (RFC 6901) that finds it.

Documents are untrusted: only local references (``#/...``) are followed, never more than
:data:`MAX_REF_HOPS` in a row, and the schema walk visits at most :data:`MAX_SCHEMAS` nodes
(a deep or cyclic document costs a bounded amount of work; what is past the bound is not
looked at). A schema reached through ``$ref`` is checked where it is defined, once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from portico.core.validation import json_pointer

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_REF_HOPS = 8
MAX_SCHEMAS = 20_000
#: the members of a schema whose values are schemas, and those holding maps or lists of them
_SCHEMA_MEMBERS = ("items", "not", "additionalProperties", "contains", "propertyNames")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


@dataclass(frozen=True)
class Operation:
    path: str
    method: str
    body: Mapping[str, Any]
    #: the path item, for its shared parameters
    item: Mapping[str, Any]

    @property
    def pointer(self) -> str:
        return json_pointer(["paths", self.path, self.method])

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}"


def pointer(*parts: str | int) -> str:
    return json_pointer(parts)


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def operations(document: Mapping[str, Any]) -> Iterator[Operation]:
    for path, item in mapping(document.get("paths")).items():
        if not isinstance(item, Mapping):
            continue
        for method in METHODS:
            body = item.get(method)
            if isinstance(body, Mapping):
                yield Operation(str(path), method, body, item)


def resolve(document: Mapping[str, Any], value: Any) -> Mapping[str, Any]:
    """``value`` with local ``$ref`` followed (an empty mapping when it leads nowhere)."""
    for _ in range(MAX_REF_HOPS):
        if not isinstance(value, Mapping):
            return {}
        ref = value.get("$ref")
        if not isinstance(ref, str):
            return value
        value = _local(document, ref)
    return {}


def _local(document: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#/"):
        return None
    target: Any = document
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(target, Mapping):
            target = target.get(part)
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return None
    return target


def parameters(
    document: Mapping[str, Any], operation: Operation
) -> Iterator[tuple[Mapping[str, Any], str]]:
    """The operation's parameters and its path item's, resolved, each with its pointer."""
    for owner, base in (
        (operation.item, ["paths", operation.path]),
        (operation.body, ["paths", operation.path, operation.method]),
    ):
        listed = owner.get("parameters")
        if not isinstance(listed, list):
            continue
        for index, raw in enumerate(listed):
            found = resolve(document, raw)
            if found:
                yield found, json_pointer([*base, "parameters", index])


def schemas(document: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], str]]:
    """Every schema object the document declares inline or in ``components`` (not those
    only reached through ``$ref``, which are yielded where they are defined)."""
    roots: list[tuple[Any, list[str | int]]] = []
    components = mapping(document.get("components"))
    for name, schema in mapping(components.get("schemas")).items():
        roots.append((schema, ["components", "schemas", name]))
    for kind in ("parameters", "headers"):
        for name, holder in mapping(components.get(kind)).items():
            roots += _held(holder, ["components", kind, name])
    for kind in ("requestBodies", "responses"):
        for name, holder in mapping(components.get(kind)).items():
            roots += _content(holder, ["components", kind, name])
    for operation in operations(document):
        base: list[str | int] = ["paths", operation.path, operation.method]
        for owner, at in ((operation.item, base[:2]), (operation.body, base)):
            listed = owner.get("parameters")
            for index, raw in enumerate(listed if isinstance(listed, list) else []):
                roots += _held(raw, [*at, "parameters", index])
        roots += _content(operation.body.get("requestBody"), [*base, "requestBody"])
        for status, response in mapping(operation.body.get("responses")).items():
            roots += _content(response, [*base, "responses", status])
    yield from _walk(roots)


def _held(holder: Any, at: list[str | int]) -> list[tuple[Any, list[str | int]]]:
    """A parameter's or header's schema (or its content's)."""
    if not isinstance(holder, Mapping) or "$ref" in holder:
        return []
    found: list[tuple[Any, list[str | int]]] = []
    if "schema" in holder:
        found.append((holder["schema"], [*at, "schema"]))
    return found + _content(holder, at)


def _content(holder: Any, at: list[str | int]) -> list[tuple[Any, list[str | int]]]:
    if not isinstance(holder, Mapping) or "$ref" in holder:
        return []
    return [
        (media["schema"], [*at, "content", media_type, "schema"])
        for media_type, media in mapping(holder.get("content")).items()
        if isinstance(media, Mapping) and "schema" in media
    ]


def _walk(
    roots: list[tuple[Any, list[str | int]]],
) -> Iterator[tuple[Mapping[str, Any], str]]:
    stack = list(reversed(roots))
    visited = 0
    while stack and visited < MAX_SCHEMAS:
        schema, at = stack.pop()
        if not isinstance(schema, Mapping) or "$ref" in schema:
            continue
        visited += 1
        yield schema, json_pointer(at)
        children: list[tuple[Any, list[str | int]]] = []
        for member in _SCHEMA_MEMBERS:
            if isinstance(schema.get(member), Mapping):
                children.append((schema[member], [*at, member]))
        for member in _SCHEMA_MAPS:
            for name, child in mapping(schema.get(member)).items():
                children.append((child, [*at, member, name]))
        for member in _SCHEMA_LISTS:
            listed = schema.get(member)
            for index, child in enumerate(listed if isinstance(listed, list) else []):
                children.append((child, [*at, member, index]))
        stack.extend(reversed(children))


def is_type(schema: Mapping[str, Any], name: str) -> bool:
    """Whether the schema says it is of JSON type ``name`` (3.1 allows a list of types)."""
    declared = schema.get("type")
    return declared == name or (isinstance(declared, list) and name in declared)
