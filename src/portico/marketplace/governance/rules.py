"""The built-in governance rules: what each checks in an OpenAPI document, its category and
severity, and the fix it suggests.

Three categories, as the seed product's users know them:

* **security** — the OWASP API Security Top 10 (2023) as far as a document shows it:
  declared security on every operation (API2, API5), no keys in query strings (API2), HTTPS
  servers (API8), 401/403/429 documented (API2, API4), bounded strings and arrays (API4);
* **style** — operation ids (present, unique, camelCase), naming and consistent paths
  (kebab-case segments, no trailing slash, no query in a path), tags;
* **documentation** — descriptions (API, operations, parameters), a contact, examples,
  error responses, and the document's validity (``doc-valid``, checked by
  openapi-spec-validator in ``validity.py``; one finding per error it reports).

A rule is switched off by naming its id in ``PORTICO_MARKETPLACE_GOVERNANCE_DISABLED_RULES``
(a JSON list); a run records which were off. :data:`RULESET_VERSION` changes whenever a rule
is added, removed or changes what it finds, so that scores of different versions are not
compared as if alike.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from portico.marketplace.governance.document import (
    Operation,
    is_type,
    mapping,
    operations,
    parameters,
    pointer,
    resolve,
    schemas,
)

RULESET_VERSION = "2026.11-1"


class Category(enum.StrEnum):
    SECURITY = "security"
    STYLE = "style"
    DOCUMENTATION = "documentation"


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


#: what a check yields: (JSON pointer, message)
Hits = Iterator[tuple[str, str]]
Check = Callable[[Mapping[str, Any]], Hits]


@dataclass(frozen=True)
class Rule:
    id: str
    category: Category
    severity: Severity
    title: str
    fix: str
    #: None for the rules the linter applies itself (validity, a missing document)
    check: Check | None = None


RULES: dict[str, Rule] = {}


def _rule(
    rule_id: str, category: Category, severity: Severity, title: str, fix: str
) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        RULES[rule_id] = Rule(rule_id, category, severity, title, fix, check)
        return check

    return register


def _declare(rule_id: str, category: Category, severity: Severity, title: str, fix: str) -> None:
    RULES[rule_id] = Rule(rule_id, category, severity, title, fix)


S, Y, D = Category.SECURITY, Category.STYLE, Category.DOCUMENTATION
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

# ------------------------------------------------------------------------------ security


def _secured(document: Mapping[str, Any], operation: Operation) -> bool:
    declared = operation.body.get("security", document.get("security"))
    return isinstance(declared, list) and len(declared) > 0


def _documents(operation: Operation, status: str) -> bool:
    responses = mapping(operation.body.get("responses"))
    return status in responses or f"{status[0]}XX" in responses


@_rule(
    "security-declared",
    S,
    ERROR,
    "Every operation declares security",
    "Add a security requirement to the operation (`security`) or to the whole API "
    "(top-level `security`) naming a scheme of `components.securitySchemes`.",
)
def _security_declared(document: Mapping[str, Any]) -> Hits:
    for operation in operations(document):
        if not _secured(document, operation):
            yield operation.pointer, f"{operation.label} declares no security requirement"


_CREDENTIAL_NAMES = frozenset(
    {"api_key", "apikey", "api-key", "key", "token", "access_token", "secret", "client_secret"}
)


@_rule(
    "security-no-query-keys",
    S,
    ERROR,
    "No keys in query strings",
    "Send keys and tokens in a header (an apiKey scheme `in: header`, or an "
    "Authorization bearer token): query strings end up in logs, caches and browser history.",
)
def _no_query_keys(document: Mapping[str, Any]) -> Hits:
    components = mapping(document.get("components"))
    for name, scheme in mapping(components.get("securitySchemes")).items():
        found = resolve(document, scheme)
        if found.get("type") == "apiKey" and found.get("in") == "query":
            at = pointer("components", "securitySchemes", name)
            yield at, f"the security scheme '{name}' takes its key from the query string"
    for operation in operations(document):
        for parameter, where in parameters(document, operation):
            named = parameter.get("name")
            if (
                parameter.get("in") == "query"
                and isinstance(named, str)
                and named.lower() in _CREDENTIAL_NAMES
            ):
                yield where, f"{operation.label} takes a credential ('{named}') in the query string"


@_rule(
    "security-https-servers",
    S,
    ERROR,
    "Servers use HTTPS",
    "Serve the API over HTTPS only and list `https://` server URLs.",
)
def _https_servers(document: Mapping[str, Any]) -> Hits:
    servers = document.get("servers")
    for index, server in enumerate(servers if isinstance(servers, list) else []):
        url = mapping(server).get("url")
        if isinstance(url, str) and url.lower().startswith("http://"):
            yield pointer("servers", index, "url"), f"the server {url} is not reached over HTTPS"


def _status_rule(status: str, *, secured_only: bool) -> Check:
    def check(document: Mapping[str, Any]) -> Hits:
        for operation in operations(document):
            if secured_only and not _secured(document, operation):
                continue
            if not _documents(operation, status):
                yield (
                    pointer("paths", operation.path, operation.method, "responses"),
                    f"{operation.label} does not document a {status} response",
                )

    return check


_rule(
    "security-401-documented",
    S,
    WARNING,
    "Secured operations document 401",
    "Document the 401 response a caller gets without valid credentials.",
)(_status_rule("401", secured_only=True))
_rule(
    "security-403-documented",
    S,
    INFO,
    "Secured operations document 403",
    "Document the 403 response a caller gets when its credentials do not allow this.",
)(_status_rule("403", secured_only=True))
_rule(
    "security-429-documented",
    S,
    WARNING,
    "Operations document 429",
    "Rate-limit the API and document its 429 response (with Retry-After).",
)(_status_rule("429", secured_only=False))

#: string formats whose values have a bounded length of their own
_BOUNDED_FORMATS = frozenset({"date", "date-time", "time", "uuid"})


@_rule(
    "security-string-bounds",
    S,
    WARNING,
    "Strings are bounded",
    "Give the string a `maxLength` (or an `enum`, a `const`, a bounded `format`).",
)
def _string_bounds(document: Mapping[str, Any]) -> Hits:
    for schema, at in schemas(document):
        if (
            is_type(schema, "string")
            and "maxLength" not in schema
            and "enum" not in schema
            and "const" not in schema
            and schema.get("format") not in _BOUNDED_FORMATS
        ):
            yield at, "a string without maxLength"


@_rule(
    "security-array-bounds",
    S,
    WARNING,
    "Arrays are bounded",
    "Give the array a `maxItems`.",
)
def _array_bounds(document: Mapping[str, Any]) -> Hits:
    for schema, at in schemas(document):
        if is_type(schema, "array") and "maxItems" not in schema:
            yield at, "an array without maxItems"


# --------------------------------------------------------------------------------- style

_CAMEL = re.compile(r"[a-z][a-zA-Z0-9]*")
_SEGMENT = re.compile(r"[a-z0-9]+(?:[-.][a-z0-9]+)*")
_PARAMETER = re.compile(r"\{[^{}/]+\}")


@_rule(
    "style-operation-id",
    Y,
    WARNING,
    "Operations have an operationId",
    "Give the operation an `operationId` (client generators name methods after it).",
)
def _operation_id(document: Mapping[str, Any]) -> Hits:
    for operation in operations(document):
        value = operation.body.get("operationId")
        if not isinstance(value, str) or not value:
            yield operation.pointer, f"{operation.label} has no operationId"


@_rule(
    "style-operation-id-unique",
    Y,
    ERROR,
    "operationIds are unique",
    "Rename the operationId: each must name one operation.",
)
def _operation_id_unique(document: Mapping[str, Any]) -> Hits:
    seen: dict[str, str] = {}
    for operation in operations(document):
        value = operation.body.get("operationId")
        if not isinstance(value, str) or not value:
            continue
        if value in seen:
            at = pointer("paths", operation.path, operation.method, "operationId")
            yield at, f"{operation.label} reuses the operationId '{value}' of {seen[value]}"
        else:
            seen[value] = operation.label


@_rule(
    "style-operation-id-case",
    Y,
    INFO,
    "operationIds are camelCase",
    "Write the operationId in camelCase (listPets, getPetById).",
)
def _operation_id_case(document: Mapping[str, Any]) -> Hits:
    for operation in operations(document):
        value = operation.body.get("operationId")
        if isinstance(value, str) and value and not _CAMEL.fullmatch(value):
            at = pointer("paths", operation.path, operation.method, "operationId")
            yield at, f"the operationId '{value}' is not camelCase"


def _paths(document: Mapping[str, Any]) -> Iterator[str]:
    yield from (str(path) for path in mapping(document.get("paths")))


@_rule(
    "style-path-case",
    Y,
    WARNING,
    "Path segments are kebab-case",
    "Write each fixed path segment in lower-case kebab-case (/user-accounts).",
)
def _path_case(document: Mapping[str, Any]) -> Hits:
    for path in _paths(document):
        fixed = [s for s in path.split("/") if s and not _PARAMETER.fullmatch(s)]
        wrong = [s for s in fixed if not _SEGMENT.fullmatch(s)]
        if wrong:
            yield pointer("paths", path), f"{path}: {', '.join(wrong)} not kebab-case"


@_rule(
    "style-path-trailing-slash",
    Y,
    WARNING,
    "Paths have no trailing slash",
    "Remove the trailing slash: /pets and /pets/ are one resource.",
)
def _trailing_slash(document: Mapping[str, Any]) -> Hits:
    for path in _paths(document):
        if len(path) > 1 and path.endswith("/"):
            yield pointer("paths", path), f"{path} ends with a slash"


@_rule(
    "style-path-query",
    Y,
    ERROR,
    "Paths hold no query string or fragment",
    "Move the query to `in: query` parameters; a path key holds the path only.",
)
def _path_query(document: Mapping[str, Any]) -> Hits:
    for path in _paths(document):
        if "?" in path or "#" in path:
            yield pointer("paths", path), f"{path} holds a query string or a fragment"


@_rule(
    "style-operation-tags",
    Y,
    INFO,
    "Operations are tagged",
    "Give the operation a tag, so that documentation groups it.",
)
def _operation_tags(document: Mapping[str, Any]) -> Hits:
    for operation in operations(document):
        tags = operation.body.get("tags")
        if not isinstance(tags, list) or not tags:
            yield operation.pointer, f"{operation.label} has no tag"


# ------------------------------------------------------------------------- documentation

_declare(
    "doc-valid",
    D,
    ERROR,
    "The document is valid OpenAPI",
    "Correct the document where the pointer says, as the OpenAPI specification requires.",
)
_declare(
    "doc-missing",
    D,
    ERROR,
    "The API has an OpenAPI document",
    "Attach the API's OpenAPI document (PATCH /apis/{node} documentation) or import it.",
)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


@_rule(
    "doc-info-description",
    D,
    WARNING,
    "The API is described",
    "Describe what the API is for in `info.description`.",
)
def _info_description(document: Mapping[str, Any]) -> Hits:
    if not _text(mapping(document.get("info")).get("description")):
        yield pointer("info"), "the API has no description"


@_rule(
    "doc-info-contact",
    D,
    INFO,
    "The API names a contact",
    "Name who answers questions about the API in `info.contact`.",
)
def _info_contact(document: Mapping[str, Any]) -> Hits:
    if not mapping(mapping(document.get("info")).get("contact")):
        yield pointer("info"), "the API names no contact"


@_rule(
    "doc-operation-description",
    D,
    WARNING,
    "Operations are described",
    "Give the operation a `summary` or a `description`.",
)
def _operation_description(document: Mapping[str, Any]) -> Hits:
    for operation in operations(document):
        if not (_text(operation.body.get("summary")) or _text(operation.body.get("description"))):
            yield operation.pointer, f"{operation.label} has neither summary nor description"


@_rule(
    "doc-parameter-description",
    D,
    INFO,
    "Parameters are described",
    "Give the parameter a `description`.",
)
def _parameter_description(document: Mapping[str, Any]) -> Hits:
    seen: set[str] = set()
    for operation in operations(document):
        for parameter, at in parameters(document, operation):
            if at not in seen and not _text(parameter.get("description")):
                seen.add(at)  # a path item's parameter is shared by its operations
                yield at, f"the parameter '{parameter.get('name')}' has no description"


def _has_example(document: Mapping[str, Any], media: Mapping[str, Any]) -> bool:
    if "example" in media or mapping(media.get("examples")):
        return True
    schema = resolve(document, media.get("schema"))
    return "example" in schema or bool(schema.get("examples"))


@_rule(
    "doc-examples",
    D,
    INFO,
    "Success responses have examples",
    "Add an `example` (or `examples`) to the success response's content.",
)
def _examples(document: Mapping[str, Any]) -> Hits:
    for operation in operations(document):
        for status, raw in mapping(operation.body.get("responses")).items():
            if not str(status).startswith("2"):
                continue
            content = mapping(resolve(document, raw).get("content"))
            for media_type, media in content.items():
                if isinstance(media, Mapping) and not _has_example(document, media):
                    at = pointer("paths", operation.path, operation.method, "responses", status)
                    yield at, f"{operation.label}: the {status} {media_type} has no example"


@_rule(
    "doc-error-responses",
    D,
    WARNING,
    "Operations document their errors",
    "Document the error responses (4xx, 5xx or `default`) and their body.",
)
def _error_responses(document: Mapping[str, Any]) -> Hits:
    for operation in operations(document):
        statuses = [str(s) for s in mapping(operation.body.get("responses"))]
        if not any(s == "default" or s[:1] in ("4", "5") for s in statuses):
            at = pointer("paths", operation.path, operation.method, "responses")
            yield at, f"{operation.label} documents no error response"
